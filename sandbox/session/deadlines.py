"""Charged time against the limits (``sandbox.shared.schedclock``: wall time minus the time the machine kept a
process waiting on a run queue), so load changes how long an answer takes, never what it is.

Each limit has a wall-clock deadline: when it could have run out. There the charged time is read, and the
deadline moves by what is left (the machine, not the program, took the rest), until the limit is reached
(``case``/``wall``) or ``OVERLOAD_FACTOR`` times the limit in wall time has passed (``overload``: the
judge's own failure). The tracer's step clock moves only when the tracer completes an expected step (a
forged progress frame cannot clear it); an executor request's runs from when it was sent.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from sandbox.backends.base import SandboxedProcess
from sandbox.session.monitor import OVERLOAD_FACTOR, TimeoutKind
from sandbox.shared.schedclock import Mark, TreeClock

#: How often a live tracer's memory cgroup is asked whether its OOM killer ended one of its processes.
OOM_CHECK_S = 0.25


@dataclass
class Request:
    """A request the executor has not answered yet, and the case a failure there is charged to."""

    kind: str  # "program" | "run" | "end"
    program: int
    case: int
    #: When to look at the request's time again: its limit in charged time cannot have run out before.
    deadline: float
    #: The executor's clock when the request was sent, and the request's limit in charged seconds.
    mark: Mark | None = None
    limit: float = 0.0


def over(
    clock: TreeClock, mark: Mark, limit: float, now: float, *, cpu_counts: bool
) -> tuple[TimeoutKind | None, float]:
    """(``case`` once ``limit`` charged seconds have passed since ``mark``; ``overload`` once the wall time
    since then reached ``OVERLOAD_FACTOR`` times the limit first; else None) and the charged seconds left."""
    left = limit - clock.charged_s(mark, cpu_counts=cpu_counts)
    if left <= 0:
        return "case", left
    if now - mark.wall >= OVERLOAD_FACTOR * limit:
        return "overload", left
    return None, left


def request_expired(clock: TreeClock, requests: Iterable[Request], now: float) -> TimeoutKind | None:
    """The executor's requests at their deadline: the first whose limit ran out, else None (each one still
    short of it has its deadline moved by what is left)."""
    for request in requests:
        if now < request.deadline or request.mark is None:
            continue
        verdict, left = over(clock, request.mark, request.limit, now, cpu_counts=False)
        if verdict is None:
            request.deadline = now + max(0.05, left)
            continue
        return verdict
    return None


class StepClock:
    """The tracer's time for its current step: ``limit`` charged seconds from when the step began (user
    code: its CPU time counts in full), and when to ask its memory cgroup about an OOM kill next."""

    def __init__(self, worker: SandboxedProcess, limit: float) -> None:
        self.clock = TreeClock(worker.clock_root)
        self.limit = limit
        self.mark: Mark | None = None
        self.deadline: float | None = None
        self.oom_check_at = 0.0

    def restart(self) -> None:
        """The tracer's next step starts now: it has ``limit`` of charged time for it."""
        self.mark = self.clock.mark()
        self.deadline = time.monotonic() + self.limit

    def stop(self) -> None:
        self.deadline = None

    def expired(self, now: float) -> TimeoutKind | None:
        """The step's limit ran out (or the overload cap came); else None, the deadline moved if it came."""
        if self.deadline is None or now < self.deadline:
            return None
        assert self.mark is not None
        verdict, left = over(self.clock, self.mark, self.limit, now, cpu_counts=True)
        if verdict is None:
            self.deadline = now + max(0.05, left)
        return verdict

    def oom_check_due(self, now: float) -> bool:
        if now < self.oom_check_at:
            return False
        self.oom_check_at = now + OOM_CHECK_S
        return True


class WallClock:
    """The job's wall limit, pushed back while the machine (not the job) makes it slow.

    The job's charged time is its wall time less the longest run-queue wait any of its processes had since
    the job began. That is lenient where they worked in parallel; the per-case limits are what stop a
    program that loops, this one bounds the job as a whole."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.started = 0.0
        self.deadline = 0.0
        self.marks: list[tuple[TreeClock, Mark]] = []

    def start(self) -> None:
        self.started = time.monotonic()
        self.deadline = self.started + self.limit

    def mark(self, clocks: Iterable[TreeClock]) -> None:
        """Every process's clock when the job was sent."""
        self.marks = [(c, c.mark()) for c in clocks]

    def expired(self, now: float) -> bool:
        """The job's wall limit came: True if the job used it (or the overload cap came), else it moves."""
        if now < self.deadline:
            return False
        stolen = min(clock.charged_s(mark) - (now - mark.wall) for clock, mark in self.marks)
        charged = (now - self.started) + stolen  # stolen is <= 0 here: minus the longest wait
        if charged >= self.limit or now - self.started >= OVERLOAD_FACTOR * self.limit:
            return True
        self.deadline = now + max(0.05, self.limit - charged)
        return False

    def kind(self, now: float) -> TimeoutKind:
        """What the job's timeout is: the judge's own failure once the overload cap came, else the job's."""
        return "overload" if now - self.started >= OVERLOAD_FACTOR * self.limit else "wall"
