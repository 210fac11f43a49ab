"""A grading node's Celery consumer: the grade task registered on the node's queue app, and the worker
that takes its messages (threads pool, exactly ``concurrency`` slots, prefetching nothing beyond them,
acknowledging a message only after its task returned)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from judge.dispatch.capabilities import node_queues
from judge.dispatch.celery_queue import GRADE_TASK, GradingQueue


def register_grade_task(queue: GradingQueue, handle: Callable[[object], str]) -> None:
    """The grade task of ``queue``'s app: ``handle(submission_id)``, acknowledged late."""

    def grade(submission_id: object) -> str:
        return handle(submission_id)

    queue.app.task(name=GRADE_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)(grade)


def celery_worker(
    queue: GradingQueue, *, node_name: str, concurrency: int, grading_backend: str, log_level: str
) -> Any:
    """The Celery worker of a node (``start()`` consumes until a warm or cold shutdown)."""
    # Celery warns when its worker runs as root, for fear of pickled messages: this node accepts JSON
    # only, and needs root for its sandbox (setuid to the slot uids, cgroups).
    from celery.exceptions import SecurityWarning

    warnings.filterwarnings("ignore", category=SecurityWarning)
    return queue.app.Worker(
        hostname=f"judge@{node_name}",
        pool="threads",
        concurrency=concurrency,
        queues=node_queues(grading_backend),
        prefetch_multiplier=1,
        without_mingle=True,
        without_gossip=True,
        without_heartbeat=True,
        quiet=True,
        loglevel=log_level.upper(),
    )
