"""Plain, detached records the store hands out (never live ORM objects, so no session leaks out)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    """A submission's life: ``queued -> running -> done``, or ``failed`` when the judge could not grade it.

    ``running -> queued`` happens only on recovery (the process that held it died) or a retry.
    """

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class CallbackState(StrEnum):
    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


@dataclass(frozen=True)
class NewSubmission:
    """What a client's accepted submission stores."""

    problem: str
    code: str
    manifest: dict[str, Any]
    key_name: str | None = None
    client_address: str | None = None
    callback_url: str | None = None


@dataclass(frozen=True)
class SubmissionRecord:
    id: str
    problem: str
    code: str
    status: Status
    verdict: str | None
    #: ``GradeResult.model_dump(mode="json", by_alias=True)`` once done.
    result: dict[str, Any] | None
    error: str | None
    attempts: int
    manifest: dict[str, Any]
    key_name: str | None
    client_address: str | None
    callback_url: str | None
    callback_state: CallbackState | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    #: The grading node holding the current attempt (distributed dispatch only).
    node: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in (Status.DONE, Status.FAILED)


class NodeState(StrEnum):
    """A grading node's life: ``starting -> ready -> draining -> stopped``; ``unready`` while its sandbox
    self-test fails or no warm worker can start (it takes no jobs then); ``lost`` once its heartbeat
    stopped and its work was queued again."""

    STARTING = "starting"
    READY = "ready"
    UNREADY = "unready"
    DRAINING = "draining"
    STOPPED = "stopped"
    LOST = "lost"


@dataclass(frozen=True)
class NodeBeat:
    """What a grading node reports with each heartbeat."""

    name: str
    hostname: str
    pid: int
    queues: str
    backend: str
    version: str
    state: NodeState
    detail: str | None
    slots: int
    busy: int
    idle_workers: int
    graded: int
    started_at: datetime


@dataclass(frozen=True)
class NodeRecord(NodeBeat):
    """A node's last heartbeat, as stored, and when it arrived."""

    last_seen: datetime


@dataclass(frozen=True)
class Claim:
    """The right to grade one submission once: the attempt number is checked when the result is written."""

    submission_id: str
    attempt: int


@dataclass(frozen=True)
class EventRecord:
    """One progress event of a submission. ``id`` grows across the whole table (an SSE event id)."""

    id: int
    submission_id: str
    attempt: int
    kind: str
    data: dict[str, Any]
    created_at: datetime
