"""The service's parts that its settings choose, built from them: the callback sender (when callbacks are
configured) and the distributed queue (when ``queue_url`` is set: Celery to ``judge worker`` nodes, with
its sweeper)."""

from __future__ import annotations

from collections.abc import Callable

from judge.core.settings import Settings
from judge.dispatch import callback_setup as setup
from judge.dispatch.callbacks import CallbackSender
from judge.dispatch.celery_queue import CeleryDispatcher, GradingQueue, Sweeper
from judge.dispatch.metrics import Metrics
from judge.store import Store


def callback_sender(settings: Settings, store: Store, metrics: Metrics) -> CallbackSender | None:
    """The API node's callback sender; None without callback hosts and a secret.

    Distributed: the node that grades a submission sends its callback; the API node's sender redelivers
    what an operator asks for (POST .../callback), resumes nothing at start, and sends the callbacks a
    grading node without callback settings handed off (polled every callback_poll_s; the node that
    accepted a callback_url always has callback settings)."""
    return setup.callback_sender(settings, store, metrics, poll_s=settings.callback_poll_s)


def celery_dispatcher(
    settings: Settings, queue_url: str, store: Store, metrics: Metrics, slots: Callable[[], int]
) -> tuple[CeleryDispatcher, GradingQueue]:
    """The distributed dispatcher (and its broker's queue, whose ping the service watches): submissions
    published to ``queue_url`` for the grading nodes, whose ready places (``slots``) bound the queue."""
    grading_queue = GradingQueue(queue_url, visibility_timeout_s=settings.visibility_timeout_s)
    sweeper = Sweeper(
        store,
        grading_queue,
        node_timeout_s=settings.node_timeout_s,
        requeue_after_s=settings.requeue_after_s,
        period_s=settings.sweep_s,
        on_requeue=metrics.requeued,
    )
    dispatcher = CeleryDispatcher(store, grading_queue, sweeper, queue_size=settings.queue_size, slots=slots)
    return dispatcher, grading_queue
