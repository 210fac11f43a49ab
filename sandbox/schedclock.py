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

import time
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

    def waited_s(self, later: TaskClock) -> float:
        return max(0, later.wait_ns - self.wait_ns) / 1e9

    def cpu_s(self, later: TaskClock) -> float:
        return max(0, later.run_ns - self.run_ns) / 1e9


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
