"""Time a task chose to spend, as opposed to time the machine kept it waiting.

Linux reports per task, in ``/proc/<pid>/task/<tid>/schedstat``, the nanoseconds it ran on a CPU and the
nanoseconds it spent runnable but not scheduled (waiting on a run queue), whatever else the machine runs. A
task's *charged* time over an interval is its wall time minus that wait: the time it ran, slept or blocked
on its own account. On a quiet machine the two are equal; at load 30 on 2 cores a compile that takes 20 s of
wall time may be charged its usual 1 s. Verdicts and time limits use charged time, so load changes how long
an answer takes, never what it is.

This module is pure standard library: the executor (inside the sandbox) times its own compile and run threads
with :func:`thread_now`, and the judge reads a worker's tasks from outside with :func:`read_task`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class TaskClock:
    """One task's counters at one moment: CPU time, run-queue wait, and the monotonic clock."""

    run_ns: int
    wait_ns: int
    wall_ns: int

    def charged_s(self, later: TaskClock) -> float:
        """Seconds from this reading to ``later`` that the task was not kept waiting by the scheduler."""
        wall = later.wall_ns - self.wall_ns
        waited = max(0, later.wait_ns - self.wait_ns)
        return max(0, wall - waited) / 1e9


def _parse(text: str, wall_ns: int) -> TaskClock | None:
    parts = text.split()
    if len(parts) < 2:
        return None
    try:
        return TaskClock(int(parts[0]), int(parts[1]), wall_ns)
    except ValueError:
        return None


def read_task(path: str) -> TaskClock | None:
    """The counters of the task whose ``schedstat`` file is ``path``; None if it is gone or unreadable."""
    wall = time.monotonic_ns()
    try:
        with open(path, "rb") as handle:
            text = handle.read(256).decode("ascii", "replace")
    except OSError:
        return None
    return _parse(text, wall)


def thread_now() -> TaskClock:
    """The calling thread's counters. Where the kernel keeps none, wait reads 0: charged time is wall time."""
    clock = read_task("/proc/thread-self/schedstat")
    if clock is None:
        return TaskClock(time.thread_time_ns(), 0, time.monotonic_ns())
    return clock


# ------------------------------------------------------------------------------------------ a worker


@dataclass(frozen=True)
class Mark:
    """A worker's clock at one moment: monotonic seconds, stolen and CPU seconds so far."""

    wall: float
    stolen: float
    cpu: float


class TreeClock:
    """Charged time of a worker: every thread of every process under its root pid, read from outside.

    Each :meth:`sample` adds to ``stolen`` the longest run-queue wait any one task had since the previous
    sample (the tasks of one worker are slowed by the machine alike; taking the longest is what keeps a
    worker that waits on itself, two compile threads on one core, from being charged twice) and to ``cpu``
    the CPU time all of them used. A worker's charged time over an interval is then its wall time minus
    what was stolen; for a process that runs user code, at least the CPU time it used (so a submission that
    slows its own main thread with busy threads of its own is charged for them).

    ``root`` returns the worker's host pid (None while unknown: the clock then reads nothing and charged
    time is wall time). Samples closer than ``min_interval_s`` to the last are skipped, which bounds the
    cost (~20 threads: well under a millisecond) and the error (one interval's stolen time).
    """

    def __init__(self, root: Callable[[], int | None], min_interval_s: float = 0.2) -> None:
        self._root = root
        self.min_interval_s = min_interval_s
        self._last: dict[int, tuple[int, int]] = {}
        self._sampled_at: float | None = None
        self.stolen = 0.0
        self.cpu = 0.0

    def sample(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and self._sampled_at is not None and now - self._sampled_at < self.min_interval_s:
            return
        self._sampled_at = now
        root = self._root()
        if root is None:
            return
        seen: dict[int, tuple[int, int]] = {}
        longest = 0
        used = 0
        for tid in _tasks(root):
            clock = read_task(f"/proc/{tid}/schedstat")
            if clock is None:
                continue
            run0, wait0 = self._last.get(tid, (0, 0))
            seen[tid] = (clock.run_ns, clock.wait_ns)
            longest = max(longest, clock.wait_ns - wait0)
            used += max(0, clock.run_ns - run0)
        self._last = seen
        self.stolen += longest / 1e9
        self.cpu += used / 1e9

    def mark(self) -> Mark:
        self.sample()
        return Mark(time.monotonic(), self.stolen, self.cpu)

    def charged_s(self, since: Mark, *, cpu_counts: bool = False) -> float:
        """Seconds charged since ``since`` (sampled now)."""
        self.sample(force=True)
        wall = time.monotonic() - since.wall
        charged = max(0.0, wall - (self.stolen - since.stolen))
        return max(charged, self.cpu - since.cpu) if cpu_counts else charged


def _tasks(root: int, limit: int = 4096) -> list[int]:
    """Thread ids of ``root`` and its descendants (``/proc/<pid>/task/<tid>/children``), at most ``limit``."""
    out: list[int] = []
    stack = [root]
    seen: set[int] = set()
    while stack and len(out) < limit:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except (OSError, ValueError):
            continue
        for tid in tids:
            out.append(tid)
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as handle:
                    stack.extend(int(c) for c in handle.read().split())
            except (OSError, ValueError):
                continue
    return out
