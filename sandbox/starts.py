"""Starting a worker on a busy host: when to give up on a start, and how many run at once.

Importing JAX costs a worker ~1-3 s of CPU. On a host whose run queue is long (other judges starting and
compiling, a test suite, a neighbour) it gets that CPU slowly: every judge's workers share the CPU weight of
one cgroup (``jax-judge``, beside every other process), and a start runs at a quarter of a job's weight. A
wall-clock limit on the start then kills starts that were progressing, begins them again from zero, and N
parallel starts that each get 1/N of the share never finish: a livelock. So:

- :class:`StartClock` judges a start by the CPU time its processes actually got, not by wall time alone: it
  fails when the start used its whole CPU budget (``startup_time_s``) without reporting ready (a spinning or
  broken start), when it got no CPU at all for ``stall_s`` (stuck, e.g. blocked for good), or after a wall
  cap of :data:`WALL_CAP_FACTOR` times the budget (every wait has a deadline). Where a backend cannot tell
  the CPU time (a container seen through its client), the budget is wall time, as before.
- :class:`StartGate` admits at most ``limit`` starts at once on the host, whatever process asks (one lock
  file per place in ``gate_dir``; ``flock`` releases a place when its holder dies), so the start storm of
  several restarted judges queues instead of sharing out the CPU until nobody finishes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: The wall cap of a start, in multiples of its CPU budget.
WALL_CAP_FACTOR = 10.0
#: CPU seconds that count as progress within a stall window.
MIN_PROGRESS_S = 0.01
#: Seconds between two readings of a start's CPU time.
POLL_S = 0.5
#: Where the host-wide start places live (``JUDGE_START_GATE_DIR``), and how many there are
#: (``JUDGE_START_CONCURRENCY``; default: the CPU count, at least 2).
GATE_DIR_ENV = "JUDGE_START_GATE_DIR"
GATE_LIMIT_ENV = "JUDGE_START_CONCURRENCY"

CpuReader = Callable[[], float | None]


@dataclass(frozen=True)
class StartProgress:
    """Where a start stands: seconds since it began, CPU seconds it got (None: unknown), seconds since its
    CPU time last moved."""

    wall_s: float
    cpu_s: float | None
    idle_s: float

    def describe(self) -> str:
        if self.cpu_s is None:
            return f"{self.wall_s:.0f} s"
        return f"{self.wall_s:.0f} s, {self.cpu_s:.1f} s of CPU"


@dataclass(frozen=True)
class StartState:
    """Why a pool is not full yet, as fields (``sandbox.pool.WorkerPool.start_state``): what a page turns into
    a sentence of its own; ``describe`` is the operator's (``/readyz``).

    ``starting``: starts under way, ``oldest`` the progress of the one begun first; ``gated``: starts wanted
    but waiting for a place at the host's start gate (``gate_limit`` places); ``failures``: consecutive
    failed starts, ``retry_in_s`` the seconds until the next start after them (None: no backoff under way),
    ``last_error`` the last start error (an operator's, never a learner's)."""

    starting: int = 0
    oldest: StartProgress | None = None
    gated: int = 0
    gate_limit: int = 0
    failures: int = 0
    retry_in_s: float | None = None
    last_error: str | None = None

    def describe(self) -> str:
        """The state in words ("" when no start is under way, waiting or scheduled)."""
        parts: list[str] = []
        if self.starting:
            oldest = f" (the oldest for {self.oldest.describe()})" if self.oldest is not None else ""
            parts.append(f"{self.starting} starting{oldest}")
        if self.gated:
            parts.append(
                f"{self.gated} waiting for a place at the host's start gate ({self.gate_limit} at once)"
            )
        if self.retry_in_s is not None:
            retry = f"next start in {self.retry_in_s:.0f} s after {self.failures} failed start(s)"
            parts.append(f"{retry}: {self.last_error}")
        return "; ".join(parts)


class StartClock:
    """Decides when a starting worker has had its chance (see the module docstring)."""

    def __init__(
        self,
        budget_s: float,
        cpu: CpuReader,
        *,
        started_at: float | None = None,
        stall_s: float | None = None,
        wall_cap_s: float | None = None,
    ) -> None:
        self.budget_s = budget_s
        self.stall_s = stall_s if stall_s is not None else budget_s
        self.wall_cap_s = wall_cap_s if wall_cap_s is not None else WALL_CAP_FACTOR * budget_s
        self._cpu = cpu
        self.started_at = time.monotonic() if started_at is None else started_at
        self._last_cpu: float | None = None
        self._moved_at = self.started_at
        self.known = True

    def progress(self) -> StartProgress:
        now = time.monotonic()
        cpu = None
        with contextlib.suppress(OSError, ValueError):
            cpu = self._cpu()
        if cpu is None:
            self.known = False
        elif self._last_cpu is None or cpu - self._last_cpu >= MIN_PROGRESS_S:
            if self._last_cpu is not None or cpu >= MIN_PROGRESS_S:
                self._moved_at = now
            self._last_cpu = cpu
        return StartProgress(now - self.started_at, cpu, now - self._moved_at)

    def overdue(self) -> str | None:
        """None while the start may go on; else why it has had its chance (for the error message)."""
        p = self.progress()
        if p.cpu_s is None or not self.known:
            if p.wall_s >= self.budget_s:
                return f"within {p.wall_s:.0f} s of its start"
            return None
        if p.cpu_s >= self.budget_s:
            return f"after {p.cpu_s:.1f} s of CPU ({p.wall_s:.0f} s since its start)"
        if p.idle_s >= self.stall_s:
            return (
                f"and got no CPU time for {p.idle_s:.0f} s ({p.cpu_s:.1f} s of CPU in {p.wall_s:.0f} s since "
                "its start): it is stuck"
            )
        if p.wall_s >= self.wall_cap_s:
            return f"within {p.wall_s:.0f} s of its start ({p.cpu_s:.1f} s of CPU: the host is overloaded)"
        return None

    def next_check(self) -> float:
        """Seconds until ``overdue`` may change its answer (bounded by the poll interval)."""
        if not self.known:
            return max(0.0, min(POLL_S, self.started_at + self.budget_s - time.monotonic()))
        return POLL_S


# ------------------------------------------------------------------------------------------ CPU readers


# ------------------------------------------------------------------------------------------ admission


def default_gate_dir() -> Path:
    return Path(os.environ.get(GATE_DIR_ENV) or Path(tempfile.gettempdir()) / "jax-judge-starts")


def default_gate_limit() -> int:
    text = os.environ.get(GATE_LIMIT_ENV, "")
    if text.isdigit() and int(text) > 0:
        return int(text)
    return max(2, os.cpu_count() or 1)


class Ticket:
    """One admitted start: holds a place of the gate until ``release`` (idempotent; also on garbage
    collection, and by the kernel when the process dies)."""

    def __init__(self, fd: int, place: int, gate: StartGate) -> None:
        self.place = place
        self._fd: int | None = fd
        self._gate = gate
        self._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            self._gate._released(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __del__(self) -> None:
        self.release()

    def split(self, count: int) -> list[Ticket]:
        """``count`` handles of this one place (a pair started as one admission): the place is released
        when every handle is."""
        shared = _Shared(self, count)
        return [_Handle(shared) for _ in range(count)]


class _Shared:
    def __init__(self, ticket: Ticket, count: int) -> None:
        self.ticket = ticket
        self.left = count
        self.lock = threading.Lock()

    def release_one(self) -> None:
        with self.lock:
            self.left -= 1
            last = self.left == 0
        if last:
            self.ticket.release()


class _Handle(Ticket):
    def __init__(self, shared: _Shared) -> None:  # a handle of a shared place: no file of its own
        self.place = shared.ticket.place
        self._shared: _Shared | None = shared
        self._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            shared, self._shared = self._shared, None
        if shared is not None:
            shared.release_one()

    @property
    def held(self) -> bool:
        return self._shared is not None


class StartGate:
    """At most ``limit`` starts at once on the host (one ``flock``ed file per place). Thread-safe."""

    def __init__(self, gate_dir: Path | None = None, limit: int | None = None) -> None:
        self.dir = gate_dir or default_gate_dir()
        self.limit = limit or default_gate_limit()
        self._lock = threading.Lock()
        self._held = 0
        #: Starts that asked and were refused since the last admission (for readiness messages).
        self.refused = 0
        #: Called (no argument, no lock held) when a place of this process is released: a pool whose
        #: starts wait for a place tries again at once instead of at its next retry.
        self._listeners: list[weakref.WeakMethod[Callable[[], None]]] = []

    def listen(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (a bound method, held weakly) whenever a place of this process is released."""
        with self._lock:
            self._listeners.append(weakref.WeakMethod(callback))

    def unlisten(self, callback: Callable[[], None]) -> None:
        with self._lock:
            self._listeners = [ref for ref in self._listeners if ref() not in (None, callback)]

    def try_acquire(self) -> Ticket | None:
        """A place now, or None when every place is taken (by this process or another)."""
        try:
            self.dir.mkdir(mode=0o1777, parents=True, exist_ok=True)
        except OSError:
            return None
        for place in range(self.limit):
            path = self.dir / f"place-{place}.lock"
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            with self._lock:
                self._held += 1
                self.refused = 0
            return Ticket(fd, place, self)
        with self._lock:
            self.refused += 1
        return None

    def acquire(self, timeout: float) -> Ticket | None:
        """A place within ``timeout`` seconds, or None."""
        deadline = time.monotonic() + timeout
        delay = 0.02
        while True:
            ticket = self.try_acquire()
            if ticket is not None or time.monotonic() >= deadline:
                return ticket
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 2, 0.25)

    @property
    def held(self) -> int:
        """Places this process holds now."""
        with self._lock:
            return self._held

    def _released(self, fd: int) -> None:
        with contextlib.suppress(OSError):
            os.close(fd)  # closing the only descriptor of the open file releases its flock
        with self._lock:
            self._held -= 1
            listeners = [ref() for ref in self._listeners]
        for listener in listeners:
            if listener is not None:
                with contextlib.suppress(Exception):
                    listener()


_DEFAULT_GATE: StartGate | None = None
_DEFAULT_LOCK = threading.Lock()


def default_gate() -> StartGate:
    """The gate every pool and one-shot start of this process uses (settings read once)."""
    global _DEFAULT_GATE
    with _DEFAULT_LOCK:
        if _DEFAULT_GATE is None:
            _DEFAULT_GATE = StartGate()
        return _DEFAULT_GATE
