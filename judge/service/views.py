"""Stored records -> the JSON the API sends (``schemas.SubmissionPublic``), without re-validating the
stored result: it was produced by ``GradeResult.model_dump(mode="json", by_alias=True)``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from judge.store import SubmissionRecord


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def submission_links(submission_id: str) -> dict[str, str]:
    return {"self": f"/api/submissions/{submission_id}", "events": f"/api/submissions/{submission_id}/events"}


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
        "links": submission_links(record.id),
    }
