"""Dispatch: how an accepted submission reaches a grader, behind one small interface.

    Dispatcher            the API side: reserve() a place (QueueFull -> 429), then commit(id) or cancel()
    +-- LocalDispatcher   in-process: a bounded queue and N grading threads over the warm engine (default)
    +-- CeleryDispatcher  distributed (``queue_url``): ids over Celery/Redis to ``judge worker`` nodes
                          (``celery_queue``, ``node``, ``redis_notify``)
    GradingLoop         the grading side: claim -> grade -> store the result once -> events, callbacks
    ProgressFeed          per-case progress: stored with the submission, published to waiting streams

The distributed queue implements ``Dispatcher`` on the API side and calls ``GradingLoop.process`` on its
grading nodes; routers and the store do not change. The database is the truth:
``Store.attempts.claim`` / ``finish`` are conditional, so a submission is graded and stored exactly once even
when a message is delivered twice or a node dies (its work is queued again).
"""

from judge.dispatch.base import Dispatcher, QueueFull, Reservation
from judge.dispatch.events import Notifier, ProgressFeed, Subscription
from judge.dispatch.grading_loop import GradingLoop, GradingObserver, Outcome
from judge.dispatch.local import LocalDispatcher

__all__ = [
    "Dispatcher",
    "GradingLoop",
    "GradingObserver",
    "LocalDispatcher",
    "Notifier",
    "Outcome",
    "ProgressFeed",
    "QueueFull",
    "Reservation",
    "Subscription",
]
