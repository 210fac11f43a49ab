"""What the parts of a ``sandbox.session.pool.ProcessPool`` share: its workers in each state (idle, starting,
handed out), its counters, when it last progressed, its lock, and the pipe that wakes its refill thread."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import deque
from collections.abc import Callable

from sandbox.backends.base import Backend, SandboxedProcess
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.starts import Waiter

BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 30.0


class PoolState:
    """One pool's shared state; every field is read and written under ``cond``."""

    def __init__(
        self, backend: Backend, limits: SandboxLimits, size: int, clock: Callable[[], float]
    ) -> None:
        self.backend, self.limits, self.size = backend, limits, size
        self.now = clock
        self.cond = threading.Condition()
        self.idle: deque[SandboxedProcess] = deque()
        self.pending: list[SandboxedProcess] = []
        self.handed: list[SandboxedProcess] = []
        self.closed = False
        #: Callers of ``acquire`` waiting for an idle worker.
        self.waiting = 0
        self.failures = 0
        self.backoff_until = 0.0
        self.last_error: str | None = None
        #: Recent wall seconds from a start to its ready (a moving average; None: none yet), for estimates.
        self.typical_start_s: float | None = None
        self.started = 0
        self.handed_out = 0
        self.discarded = 0
        #: When (``clock``) the pool last progressed: a start began, advanced or became ready, the start
        #: queue moved, a worker was handed out or came back.
        self.progress_at = clock()
        #: This pool's tickets in the host's start queue, lowest first (one per start wanted and not begun).
        self.waiters: list[Waiter] = []
        #: Starts wanted but not begun because every place of the start gate was taken.
        self.gated = 0
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        #: Guards the wake pipe's write end for ``gate_freed`` (a gate's release may come from any thread,
        #: holding any pool's lock: it must not take ``cond``).
        self.wake_lock = threading.Lock()

    def progressed(self, at: float | None = None, *, start: bool = False) -> None:
        """Something moved (at ``at``, default now); the caller holds ``cond``. ``start``: a start began or
        advanced, or the start queue moved, which counts only while starts do not fail (a backend whose every
        start fails makes no progress, however busy its starts are)."""
        if start and self.failures:
            return
        self.progress_at = max(self.progress_at, self.now() if at is None else at)

    def failed(self, why: str) -> None:
        """A start failed: the next waits a backoff that doubles on each failure in a row."""
        with self.cond:
            self.failures += 1
            self.last_error = why
            delay = min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2 ** (self.failures - 1))
            self.backoff_until = time.monotonic() + delay
            self.cond.notify_all()

    def retire(self, worker: SandboxedProcess) -> None:
        """Close a worker the pool will not hand out (dead, or not right for the job)."""
        with self.cond:
            self.discarded += 1
            if worker in self.handed:
                self.handed.remove(worker)
        close_worker(worker)

    def serving(self) -> bool:
        """A worker of this pool is out on a job, or a caller waits for one."""
        with self.cond:
            return self.waiting > 0 or any(not finished(w) for w in self.handed)

    def wake(self) -> None:
        with self.cond, contextlib.suppress(OSError):
            if self.wake_w >= 0:  # never write to a closed (maybe reused) descriptor number
                os.write(self.wake_w, b"x")

    def gate_freed(self) -> None:
        """A place at the start gate was released in this process: starts waiting for one try now (a place
        released by another process is found at the refill thread's next look)."""
        if not self.gated:
            return
        with self.wake_lock, contextlib.suppress(OSError):
            if self.wake_w >= 0:
                os.write(self.wake_w, b"x")

    def drain_wake(self) -> None:
        with contextlib.suppress(OSError):
            while os.read(self.wake_r, 4096):
                pass

    def close_wake(self) -> None:
        with self.cond, self.wake_lock:
            for fd in (self.wake_r, self.wake_w):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self.wake_r = self.wake_w = -1


def finished(worker: SandboxedProcess | None) -> bool:
    """The worker is closed (or, for backends that cannot tell, dead) and its slot may be reused."""
    if worker is None:  # leased, not started yet
        return False
    closed = getattr(worker, "closed", None)
    if isinstance(closed, bool):
        return closed
    return not worker.alive()


def close_worker(worker: SandboxedProcess) -> None:
    worker.release_admission()
    with contextlib.suppress(Exception):
        worker.kill()
    with contextlib.suppress(Exception):
        worker.wait(5.0)
    with contextlib.suppress(Exception):
        worker.close()
