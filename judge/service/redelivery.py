"""A manual callback redelivery (``POST /api/v1/submissions/{id}/callback``), debounced.

    redeliver(services, record)   -> True: a new delivery is queued; False: collapsed into one under way

A redelivery is a new delivery: its tries carry a new delivery id (``webhook-id``, ``X-Judge-Delivery``;
judge.dispatch.callbacks.delivery_id), so a receiver that drops ids it has seen does not drop it.
Calls collapse into one delivery while one is pending (queued, being tried, or between its retries) or
within ``WINDOW_S`` of the start of the last redelivery: thirty calls in a row give one delivery, not
thirty. The first redelivery after the grading's own delivery is never held back (it failed, say).
"""

from __future__ import annotations

import threading
from datetime import UTC, timedelta

from judge.service.api_errors import ApiError
from judge.service.state import Services
from judge.store import CallbackState, SubmissionRecord
from judge.store.models import utcnow

#: Seconds after a redelivery's first try during which another redelivery call is collapsed into it.
WINDOW_S = 10.0
#: One redelivery decision at a time in this process (read the tries, then reopen); across API nodes the
#: store's conditional reopen lets one of several concurrent calls start a delivery.
_LOCK = threading.Lock()


def redeliver(services: Services, record: SubmissionRecord) -> bool:
    """Start a new delivery of a finished submission's callback, unless one is pending or the last
    redelivery started under ``WINDOW_S`` ago (then nothing is done: False). Raises ApiError 503 on a
    judge without callback settings."""
    sender = services.callbacks
    if sender is None:
        raise ApiError(503, "callbacks_unavailable", "this judge has no callback settings (callback_hosts)")
    with _LOCK:
        current = services.store.submissions.get(record.id)
        if current is None:
            raise ApiError(404, "submission_not_found", f"no submission {record.id!r}", path="id")
        if current.callback_state in (CallbackState.PENDING, CallbackState.HANDED_OFF):
            return False  # a delivery is under way (or not yet begun): this call is part of it
        if sender.holds(record.id):
            return False
        # Each delivery starts with a try numbered 1: the first is the grading's own, the others were
        # redeliveries. One started under WINDOW_S ago takes this call in.
        starts = [
            at if at.tzinfo is not None else at.replace(tzinfo=UTC)
            for attempt, _, _, at in services.store.callbacks.attempts(record.id)
            if attempt == 1
        ]
        if len(starts) >= 2 and utcnow() - max(starts) < timedelta(seconds=WINDOW_S):
            return False
        if not services.store.callbacks.reopen(record.id):
            return False  # another API node reopened it a moment ago: its delivery takes this call in
        return sender.redeliver(record.id)
