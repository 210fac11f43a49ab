"""Whether a queued submission waits for the version of its problem it was accepted for, in words.

A grader that lacks that version gives the submission back (``judge.dispatch.grading_loop``); this says so to
whoever reads the submission, from what the graders report (this process's problems, or the live grading
nodes' heartbeats), whatever the dispatch.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from judge.dispatch.base import Waiting
from judge.store import Status, SubmissionRecord
from judge.store.manifest import version_label

if TYPE_CHECKING:
    from judge.service.state import Services

log = logging.getLogger(__name__)


def version_waiting(services: Services, record: SubmissionRecord) -> dict[str, Any] | None:
    """``SubmissionWaiting`` with reason ``version`` while no grader has the submission's version of its
    problem; None when one has (or it is not queued, or it recorded no version, or nothing can tell)."""
    accepted = record.manifest.get("problem_hash")
    if record.status is not Status.QUEUED or not isinstance(accepted, str):
        return None
    try:
        if services.fleet.version_graded(record.problem, accepted):
            return None
    except Exception:  # the database cannot tell: say nothing rather than something wrong
        log.exception("looking up the graders of %s failed", record.problem)
        return None
    label = version_label(record.problem, accepted, record.manifest.get("problem_revision"))
    message = (
        f"Waiting for a grading node with {label}, the version it was submitted for: it is never graded "
        "with another version, and waiting does not count as an attempt."
    )
    return {**asdict(Waiting(ahead=0, reason="version", estimate_s=None)), "message": message}
