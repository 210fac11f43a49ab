"""Run jobs a few at a time, each within a deadline: a job that never returns cannot hang ``judge check``.

    results = run_bounded(jobs, run, workers=2, budget_s=600, lost=lambda job, s: ..., done=print_line)

Jobs run on daemon threads (a thread stuck in a lost sandbox cannot keep the process alive at exit). A job
still running ``budget_s`` after it began is given up: its result is ``lost(job, seconds)``, and the caller
closes what it ran on (its pool), which ends the stuck wait. ``done(index, result)`` is called as each job
finishes or is given up, in the order that happens.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

J = TypeVar("J")
R = TypeVar("R")


def run_bounded(
    jobs: Sequence[J],
    run: Callable[[J], R],
    *,
    workers: int,
    budget_s: float,
    lost: Callable[[J, float], R],
    done: Callable[[int, R], None] | None = None,
) -> list[R]:
    """The results of ``run(job)`` in the order of ``jobs``; ``lost(job, seconds)`` for a job past its
    deadline. ``run`` must not raise (turn failures into results)."""
    results: dict[int, R] = {}
    began: dict[int, float] = {}
    lock = threading.Condition()
    queue = list(range(len(jobs)))[::-1]

    def finish(index: int, result: R) -> None:
        with lock:
            if index in results:  # given up already: the late result is dropped
                return
            results[index] = result
            lock.notify_all()
        if done is not None:
            done(index, result)

    def worker() -> None:
        while True:
            with lock:
                if not queue:
                    return
                index = queue.pop()
                began[index] = time.monotonic()
            finish(index, run(jobs[index]))

    for n in range(max(1, min(workers, len(jobs)))):
        threading.Thread(target=worker, name=f"judge-check-{n}", daemon=True).start()
    while True:
        with lock:
            if len(results) == len(jobs):
                break
            now = time.monotonic()
            overdue = [i for i, t in began.items() if i not in results and now - t >= budget_s]
            if not overdue:
                lock.wait(1.0)
                continue
        for index in overdue:
            finish(index, lost(jobs[index], now - began[index]))
    return [results[i] for i in range(len(jobs))]
