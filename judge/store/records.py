"""Plain, detached records the store hands out (never live ORM objects, so no session leaks out)."""

from __future__ import annotations

from dataclasses import dataclass, field
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
    #: Still to send, by an API node: the grading node that finished it has no callback settings
    #: (``Store.callbacks.hand_off``). Reads show it as ``pending``.
    HANDED_OFF = "handed_off"


@dataclass(frozen=True)
class NewSubmission:
    """What a client's accepted submission stores."""

    problem: str
    code: str
    manifest: dict[str, Any]
    key_name: str | None = None
    #: The owner: the API key's stable id (the name for a key without one); None without a key.
    key_id: str | None = None
    client_address: str | None = None
    callback_url: str | None = None
    external_user: str | None = None
    tags: dict[str, str] | None = None
    regrade_of: str | None = None


@dataclass(frozen=True)
class IdempotencyKey:
    """An ``Idempotency-Key`` presented with a submit: ``scope`` is the API key (or a keyless client's
    address), ``body_hash`` the SHA-256 of the request body it came with."""

    scope: str
    key: str
    body_hash: str


@dataclass(frozen=True)
class IdempotencyHit:
    """What a stored idempotency key names: the submission and the hash of the body that created it."""

    submission_id: str
    body_hash: str
    created_at: datetime


class IdempotencyTaken(Exception):
    """Another request stored the same idempotency key first (look it up again)."""


@dataclass(frozen=True)
class Quota:
    """Caps on one owner's submissions (an API key's id, or a keyless client's address), checked in
    the transaction that stores a new one, so they hold across API nodes: ``unfinished`` queued or
    running at once, ``queued`` waiting at once (its share of the queue)."""

    unfinished: int
    queued: int


class QuotaExceeded(Exception):
    """Storing it would take its owner past a Quota (nothing was stored)."""

    def __init__(self, limit: str, count: int, cap: int) -> None:
        super().__init__(f"{limit}: {count} of at most {cap}")
        #: ``submissions_per_client`` (unfinished) or ``queue_share`` (queued).
        self.limit = limit
        self.count = count
        self.cap = cap


@dataclass(frozen=True)
class Deferred:
    """A claim refused because the submission's owner already has ``running`` gradings, its cap: it
    stays queued for later."""

    running: int


@dataclass(frozen=True)
class SubmissionFilter:
    """Which submissions of one API key (its id; None: the keyless ones) a listing returns; None fields
    do not filter."""

    key_id: str | None
    problem: str | None = None
    status: Status | None = None
    verdict: str | None = None
    external_user: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    #: Only submissions with this tag (name, value).
    tag: tuple[str, str] | None = None
    #: Only regrades of this submission.
    regrade_of: str | None = None


@dataclass(frozen=True)
class Cursor:
    """Where a listing page ends: the last item's (created_at, id); the next page starts after it."""

    created_at: datetime
    id: str


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
    external_user: str | None = None
    tags: dict[str, str] | None = None
    regrade_of: str | None = None
    #: The owner's key id (None: submitted without a key).
    key_id: str | None = None
    #: The number of the grading its status, verdict and result come from (1 until it is regraded).
    grading: int = 1

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
    #: The problems it serves: slug -> {"revision": int, "hash": str}.
    problem_versions: dict[str, Any] | None = field(default=None, kw_only=True)


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
