"""The dispatch interface the API depends on (and nothing else about queues)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from judge.core.errors import JudgeError


class QueueFull(JudgeError):
    """No room for another submission now; try again after ``retry_after`` seconds (an HTTP 429)."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Reservation(ABC):
    """A place in the queue, held while the submission is stored; then ``commit`` it, or ``cancel``."""

    @abstractmethod
    def commit(self, submission_id: str) -> None:
        """Queue the stored submission for grading. Never fails for lack of room (the place is held)."""

    @abstractmethod
    def cancel(self) -> None:
        """Give the place back (storing failed)."""


class OneShotReservation(Reservation):
    """A reservation used once: ``commit`` calls ``on_commit(id)``, ``cancel`` calls ``on_cancel()``; a
    second ``commit`` raises, a ``cancel`` after either does nothing."""

    def __init__(self, on_commit: Callable[[str], None], on_cancel: Callable[[], None]) -> None:
        self._hooks: tuple[Callable[[str], None], Callable[[], None]] | None = (on_commit, on_cancel)

    def commit(self, submission_id: str) -> None:
        hooks, self._hooks = self._hooks, None
        if hooks is None:
            raise RuntimeError("reservation already used")
        hooks[0](submission_id)

    def cancel(self) -> None:
        hooks, self._hooks = self._hooks, None
        if hooks is not None:
            hooks[1]()


#: Why a queued submission waits: ``queue`` behind others; ``run_reserve`` held back so that Runs keep their
#: warm workers; ``capacity`` queued again because no sandbox worker came up for it (no attempt used);
#: ``starting`` next, its grading about to take a sandbox worker; ``version`` held until a grader has the
#: version of its problem it was accepted for (a rollout under way; no attempt used).
WaitReason = Literal["queue", "run_reserve", "capacity", "starting", "version"]


@dataclass(frozen=True)
class Waiting:
    """Where a queued submission stands: ``ahead`` submissions go first, ``reason`` why it waits,
    ``estimate_s`` rough whole seconds until its grading starts (None: unknown)."""

    ahead: int
    reason: WaitReason
    estimate_s: int | None


class Dispatcher(ABC):
    """Gets stored submissions graded. Thread-safe."""

    @abstractmethod
    def start(self) -> None:
        """Begin grading; queue again every stored submission that is unfinished (queued or running)."""

    @abstractmethod
    def reserve(self) -> Reservation:
        """Hold a place for one more submission, or raise QueueFull."""

    @abstractmethod
    def depth(self) -> int:
        """Submissions waiting to be graded."""

    @abstractmethod
    def running(self) -> int:
        """Submissions being graded now."""

    def waiting(self, submission_id: str) -> Waiting | None:
        """Where a submission queued on this dispatcher stands (None: not queued here, or unknown)."""
        return None

    @abstractmethod
    def close(self, grace_s: float) -> None:
        """Stop taking work; let running gradings finish for up to ``grace_s`` seconds. Unfinished work
        stays stored as it is and is queued again by the next ``start``."""
