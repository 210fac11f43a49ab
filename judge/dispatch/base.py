"""The dispatch interface the API depends on (and nothing else about queues)."""

from __future__ import annotations

from abc import ABC, abstractmethod

from judge.errors import JudgeError


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

    @abstractmethod
    def close(self, grace_s: float) -> None:
        """Stop taking work; let running gradings finish for up to ``grace_s`` seconds. Unfinished work
        stays stored as it is and is queued again by the next ``start``."""
