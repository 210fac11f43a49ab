"""Whether a submission's callback may be delivered again (``POST /api/submissions/{id}/callback``)."""

from __future__ import annotations

from judge.store import SubmissionRecord
from judge.submissions.refusals import NotRedeliverable


def check_redeliverable(record: SubmissionRecord) -> None:
    """Raise NotRedeliverable unless ``record`` has a callback URL and is finished."""
    if not record.callback_url:
        raise NotRedeliverable("no_callback", "this submission has no callback_url")
    if not record.finished:
        raise NotRedeliverable(
            "not_finished", f"the submission is {record.status.value}: it calls back when done"
        )
