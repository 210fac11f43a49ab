"""A stored submission as its JSON document (``schemas.SubmissionPublic``'s shape): what the API answers
for it and what a callback posts, the grading node's and the API node's alike. The stored result is not
validated again: it was produced by ``GradeResult.model_dump(mode="json", by_alias=True)``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from judge.store import SubmissionRecord
from judge.store.manifest import version_note


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def submission_links(submission_id: str) -> dict[str, str]:
    base = f"/api/v1/submissions/{submission_id}"
    return {"self": base, "events": f"{base}/events"}


def submission_json(record: SubmissionRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "problem": record.problem,
        "status": record.status.value,
        "verdict": record.verdict,
        "result": record.result,
        "error": record.error,
        "attempts": record.attempts,
        "created_at": _time(record.created_at),
        "started_at": _time(record.started_at),
        "finished_at": _time(record.finished_at),
        "manifest": record.manifest,
        "external_user": record.external_user,
        "tags": record.tags,
        "regrade_of": record.regrade_of,
        "grading": record.grading,
        "version_mismatch": version_note(record.manifest),
        "links": submission_links(record.id),
    }
