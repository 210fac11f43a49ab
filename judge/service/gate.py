"""Capacity for Run: interactive requests that must never wait behind queued submissions.

The engine keeps ``submission_concurrency + run_reserve`` warm workers; submissions use at most
``submission_concurrency`` of them (the dispatcher's threads). ``RunGate`` lets Runs use the reserve plus
whatever the submissions leave idle, so a Run starts at once unless Runs alone fill the judge; then up to
``queue`` Runs wait at most ``wait_s`` seconds, and the rest get RunBusy (a 429 with Retry-After).
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator

from judge.core.errors import JudgeError


class RunBusy(JudgeError):
    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RunGate:
    def __init__(self, capacity: Callable[[], int], *, queue: int, wait_s: float) -> None:
        self._capacity = capacity
        self.queue = queue
        self.wait_s = wait_s
        self._cond = threading.Condition()
        self._active = 0
        self._waiting = 0

    def capacity(self) -> int:
        """Runs that may run at once now."""
        return self._capacity()

    @property
    def active(self) -> int:
        with self._cond:
            return self._active

    @property
    def waiting(self) -> int:
        with self._cond:
            return self._waiting

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one Run's capacity for the ``with`` block; raises RunBusy when none comes in time."""
        deadline = time.monotonic() + self.wait_s
        with self._cond:
            if self._active >= max(1, self._capacity()):
                if self._waiting >= self.queue:
                    raise RunBusy(
                        f"{self._active} Runs are running and {self._waiting} waiting, the most allowed",
                        retry_after=max(1, math.ceil(self.wait_s / 4)),
                    )
                self._waiting += 1
                try:
                    while self._active >= max(1, self._capacity()):
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            raise RunBusy(
                                f"no sandbox worker became free for this Run within {self.wait_s:g} s",
                                retry_after=max(1, math.ceil(self.wait_s / 4)),
                            )
                        self._cond.wait(min(remaining, 0.5))
                finally:
                    self._waiting -= 1
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify()
