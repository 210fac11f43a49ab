"""Reading submissions as the API shows them: one listing item, several by id (owner-scoped), and a
submission's callback delivery record.

    item(services, record, names)              a listing item: the summary, or the ``fields`` asked for
    by_ids(services, caller, ids, names)       {items, next_cursor: None, total, missing}
    callback_status(services, record)          {url, state, attempts: [...]}
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from judge.service.ratelimit import Principal
from judge.service.state import Services
from judge.service.views import SUMMARY_FIELDS, selected
from judge.store import CallbackState, SubmissionRecord


def callback_status(services: Services, record: SubmissionRecord) -> dict[str, Any]:
    tries = services.store.callbacks.attempts(record.id)
    state = record.callback_state.value if record.callback_state is not None else "pending"
    if record.callback_state is CallbackState.HANDED_OFF:
        state = "pending"  # still to send, by an API node (the try-0 note says which grader could not)
    return {
        "url": record.callback_url,
        "state": state,
        "attempts": [
            {"attempt": n, "status_code": code, "error": error, "at": at.isoformat().replace("+00:00", "Z")}
            for n, code, error, at in tries
        ],
    }


def item(services: Services, record: SubmissionRecord, names: Collection[str] | None) -> dict[str, Any]:
    """A listing item: SUMMARY_FIELDS, or only ``names`` (``callback`` read when named)."""
    callback = None
    if names is not None and "callback" in names and record.callback_url:
        callback = callback_status(services, record)
    return selected(record, names, SUMMARY_FIELDS, callback)


def by_ids(
    services: Services, caller: Principal, ids: Sequence[str], names: Collection[str] | None
) -> dict[str, Any]:
    """The caller's submissions of ``ids`` (canonical), in that order; the others (no such submission,
    or another API key's, or a keyless one) are ``missing``, never told apart."""
    items: list[dict[str, Any]] = []
    missing: list[str] = []
    for submission_id in ids:
        record = services.store.submissions.get(submission_id)
        if record is None or caller.key_id is None or record.key_id != caller.key_id:
            missing.append(submission_id)
            continue
        items.append(item(services, record, names))
    return {"items": items, "next_cursor": None, "total": len(items), "missing": missing}
