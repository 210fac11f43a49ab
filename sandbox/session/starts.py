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
- :class:`StartGate` admits at most ``limit`` starts at once on the host, whatever process asks, in the order
  they asked: a queue of numbered tickets (one ``flock``ed file per waiter, lowest served first; a dead
  waiter's lock goes with it, so it never holds the queue), one lock file per place in ``gate_dir``
  (``flock`` releases a place when its holder dies). The start storm of several restarted judges queues
  instead of sharing out the CPU until nobody finishes, and no process loses a race for minutes.
- Waits are bounded by progress, not by the clock: a waiter fails only when the queue ahead of it has not
  moved (no start admitted, no waiter ahead gone, no start holding a place advanced: ``Ticket.touch``, from
  the holder's ``StartClock``) for a bounded time; a long queue that moves is waited out however long.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator
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
#: Seconds between a waiter's reports that it still asks (its ticket file's modification time).
TOUCH_S = 5.0
#: A waiter that has not asked for this many seconds (a stopped process) no longer holds back those behind it.
STALE_S = 60.0
#: A wait for a worker or a start fails only after this many multiples of a start's budget with no progress
#: at all (no start admitted or advanced anywhere on the host, no worker handed out or made ready).
STALL_FACTOR = 2.0

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
    """Why a pool is not full yet, as fields (``sandbox.session.pool.ProcessPool.start_state``): what a page
    turns into a sentence of its own; ``describe`` is the operator's (``/readyz``).

    ``starting``: starts under way, ``oldest`` the progress of the one begun first; ``gated``: starts wanted
    but waiting for a place at the host's start gate (``gate_limit`` places), ``queue_ahead`` the starts of
    any process queued before the first of them; ``typical_s``: the wall seconds a start of this pool has
    recently taken (None: none finished yet), for estimates; ``failures``: consecutive
    failed starts, ``retry_in_s`` the seconds until the next start after them (None: no backoff under way),
    ``last_error`` the last start error (an operator's, never a learner's)."""

    starting: int = 0
    oldest: StartProgress | None = None
    gated: int = 0
    gate_limit: int = 0
    queue_ahead: int = 0
    typical_s: float | None = None
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
            behind = f", {self.queue_ahead} other starts queued ahead" if self.queue_ahead else ""
            at_once = f"{self.gate_limit} at once{behind}"
            parts.append(f"{self.gated} waiting for a place at the host's start gate ({at_once})")
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
        on_move: Callable[[], None] | None = None,
    ) -> None:
        """``on_move`` is called whenever the start's CPU time is seen to move (its place at the gate is
        touched, so that waiters of other processes see the start advance)."""
        self.budget_s = budget_s
        self._on_move = on_move
        self.stall_s = stall_s if stall_s is not None else budget_s
        self.wall_cap_s = wall_cap_s if wall_cap_s is not None else WALL_CAP_FACTOR * budget_s
        self._cpu = cpu
        self.started_at = time.monotonic() if started_at is None else started_at
        self._last_cpu: float | None = None
        self._moved_at = self.started_at
        self.known = True

    @property
    def moved_at(self) -> float:
        """When (``time.monotonic``) the start last got CPU time, or began."""
        return self._moved_at

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
                if self._on_move is not None:
                    with contextlib.suppress(Exception):
                        self._on_move()
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

    def touch(self) -> None:
        """Say that the start holding this place advanced (its processes got CPU time): the place file's
        modification time, which waiters of every process read as progress of the queue ahead of them."""
        with self._lock:
            fd = self._fd
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.utime(fd)

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

    def touch(self) -> None:
        shared = self._shared
        if shared is not None:
            shared.ticket.touch()

    @property
    def held(self) -> bool:
        return self._shared is not None


@dataclass(frozen=True)
class QueueView:
    """What a waiter saw of the queue at its last look: ``ahead`` waiters (of any process) hold lower
    tickets; ``served`` starts were admitted since the gate directory was made; ``advanced`` is the latest
    time (the places' files' modification time, ns) a start holding a place reported progress."""

    ahead: int
    served: int
    advanced: int


class Waiter:
    """One start's place in the gate's queue: a numbered ticket, held (``flock``) by this process until it is
    admitted or cancelled. ``try_admit`` gives it a place once every lower live ticket has one (lowest first,
    over every process of the host); ``stalled_for`` says how long the queue ahead has not moved."""

    def __init__(self, gate: StartGate, number: int, fd: int, path: Path) -> None:
        self.gate = gate
        self.number = number
        self._fd: int | None = fd
        self._path = path
        self._lock = threading.Lock()
        self.view: QueueView | None = None
        self.moved_at = time.monotonic()
        self._touched_at = self.moved_at

    @property
    def waiting(self) -> bool:
        return self._fd is not None

    def try_admit(self) -> Ticket | None:
        """A place now if it is this ticket's turn (None: still waiting; the view and progress are updated).
        A cancelled waiter gets None."""
        with self._lock:
            if self._fd is None:
                return None
            now = time.monotonic()
            if now - self._touched_at >= TOUCH_S:
                with contextlib.suppress(OSError):
                    os.utime(self._fd)  # still asking: its turn is not skipped as a stopped waiter's
                self._touched_at = now
            result = self.gate._admit(self.number)
            if result is None:
                return None
            view, ticket = result
            if self.view is None or view != self.view:
                if self.view is not None:
                    self.moved_at = now
                self.view = view
            if ticket is not None:
                self._drop()
            return ticket

    def stalled_for(self) -> float:
        """Seconds since this waiter last saw the queue move (a start admitted, a waiter ahead gone, a start
        holding a place advanced), or since it joined."""
        return time.monotonic() - self.moved_at

    def cancel(self) -> None:
        """Leave the queue (idempotent; also on garbage collection, and by the kernel when the process
        dies)."""
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                self._path.unlink()
            with contextlib.suppress(OSError):
                os.close(fd)

    def __del__(self) -> None:
        self.cancel()


class StartGate:
    """At most ``limit`` starts at once on the host, admitted in the order they asked (a queue of numbered
    tickets, over every process), one ``flock``ed file per place. Thread-safe.

    Files of ``dir``: ``queue.lock`` (``flock``ed for the moment of taking a ticket or deciding an admission;
    it holds the next ticket number and the count of admissions), ``ticket-N`` (one per waiter, ``flock``ed by
    it while it waits: a waiter that died releases it, and is skipped and its file removed by the next look;
    one that stopped asking for :data:`STALE_S` is skipped too), ``place-P.lock`` (held while a start runs;
    its modification time is the start's last progress, ``Ticket.touch``)."""

    def __init__(self, gate_dir: Path | None = None, limit: int | None = None) -> None:
        self.dir = gate_dir or default_gate_dir()
        self.limit = limit or default_gate_limit()
        self._lock = threading.RLock()  # re-entrant: a Ticket collected while it is held releases through it
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

    def join(self) -> Waiter | None:
        """A ticket at the end of the queue (None: the gate directory is unusable)."""
        with self._locked() as queue:
            if queue is None:
                return None
            number, served = _read_counters(queue)
            path = self.dir / f"ticket-{number:016d}"
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
            except OSError:
                return None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                return None
            _write_counters(queue, number + 1, served)
        return Waiter(self, number, fd, path)

    def try_acquire(self) -> Ticket | None:
        """A place now, or None when every place is taken or others queue for one (it never overtakes)."""
        waiter = self.join()
        if waiter is None:
            return None
        try:
            ticket = waiter.try_admit()
        finally:
            waiter.cancel()
        if ticket is None:
            with self._lock:
                self.refused += 1
        return ticket

    def acquire(self, stall_s: float, *, cancel: threading.Event | None = None) -> Ticket | None:
        """A place once this caller's turn comes; None when the queue ahead did not move for ``stall_s``
        seconds (no start admitted, no waiter ahead gone, no start holding a place advanced) or ``cancel``
        was set. However long the queue, a wait that keeps moving never ends in None."""
        waiter = self.join()
        if waiter is None:
            return None
        delay = 0.02
        try:
            while True:
                ticket = waiter.try_admit()
                if ticket is not None:
                    return ticket
                if waiter.stalled_for() >= stall_s or (cancel is not None and cancel.is_set()):
                    return None
                time.sleep(min(delay, max(0.0, stall_s - waiter.stalled_for())))
                delay = min(delay * 2, 0.25)
        finally:
            waiter.cancel()

    @property
    def held(self) -> int:
        """Places this process holds now."""
        with self._lock:
            return self._held

    @contextlib.contextmanager
    def _locked(self) -> Iterator[int | None]:
        """The queue file, ``flock``ed (None: the directory cannot be used)."""
        with self._lock:
            try:
                self.dir.mkdir(mode=0o1777, parents=True, exist_ok=True)
                fd = os.open(self.dir / "queue.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
            except OSError:
                yield None
                return
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield fd
            finally:
                os.close(fd)  # releases the flock

    def _admit(self, number: int) -> tuple[QueueView, Ticket | None] | None:
        """Under the queue lock: the waiters ahead of ticket ``number`` (dead ones removed), and a place
        when there are more free places than waiters ahead (None: the directory cannot be used)."""
        with self._locked() as queue:
            if queue is None:
                return None
            _, served = _read_counters(queue)
            ahead = self._live_tickets_below(number)
            taken: list[tuple[int, int]] = []
            advanced = 0
            for place in range(self.limit):
                path = self.dir / f"place-{place}.lock"
                try:
                    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
                except OSError:
                    continue
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    with contextlib.suppress(OSError):
                        advanced = max(advanced, os.fstat(fd).st_mtime_ns)
                    os.close(fd)
                    continue
                taken.append((fd, place))
            ticket = None
            if len(taken) > ahead:
                fd, place = taken.pop(ahead)  # the lower free places are left to the waiters ahead
                os.utime(fd)
                _write_counters(queue, _read_counters(queue)[0], served + 1)
                self._held += 1  # ``_locked`` holds ``self._lock``
                self.refused = 0
                ticket = Ticket(fd, place, self)
            for fd, _ in taken:
                os.close(fd)
            return QueueView(ahead, served, advanced), ticket

    def _live_tickets_below(self, number: int) -> int:
        ahead = 0
        now = time.time()
        try:
            names = os.listdir(self.dir)
        except OSError:
            return 0
        for name in names:
            if not name.startswith("ticket-"):
                continue
            try:
                other = int(name[len("ticket-") :])
            except ValueError:
                continue
            if other >= number:
                continue
            path = self.dir / name
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except OSError:  # held: a live waiter, unless it stopped asking long ago
                    if now - os.fstat(fd).st_mtime < STALE_S:
                        ahead += 1
                    continue
                with contextlib.suppress(OSError):
                    path.unlink()  # its waiter died: its turn is gone
            finally:
                os.close(fd)
        return ahead

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


def _read_counters(fd: int) -> tuple[int, int]:
    """(next ticket number, admissions so far) from the queue file (0, 0 when new or unreadable)."""
    try:
        text = os.pread(fd, 64, 0).decode("ascii").split()
        return int(text[0]), int(text[1])
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return 0, 0


def _write_counters(fd: int, number: int, served: int) -> None:
    data = f"{number} {served}\n".encode("ascii")
    with contextlib.suppress(OSError):
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))


_DEFAULT_GATE: StartGate | None = None
_DEFAULT_LOCK = threading.Lock()


def default_gate() -> StartGate:
    """The gate every pool and one-shot start of this process uses (settings read once)."""
    global _DEFAULT_GATE
    with _DEFAULT_LOCK:
        if _DEFAULT_GATE is None:
            _DEFAULT_GATE = StartGate()
        return _DEFAULT_GATE
