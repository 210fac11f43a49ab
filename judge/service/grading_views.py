"""Stored gradings -> the JSON ``GET /api/v1/submissions/{id}/gradings`` and a problem regrade's status
send (``schemas.GradingList``, ``schemas.RegradeJob``), without re-validating stored results."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from judge.store import Status, SubmissionRecord
from judge.store.gradings import GRADING_QUEUED, GradingRecord
from judge.store.regrade_jobs import JobRecord


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def _first(record: SubmissionRecord) -> dict[str, Any]:
    """A submission never regraded has one grading: its own (queued, running or ended)."""
    manifest = record.manifest or {}
    finished = record.finished
    return {
        "number": record.grading,
        "status": record.status.value,
        "current": True,
        "regrade": record.grading > 1,
        "verdict": record.verdict,
        "result": record.result,
        "error": record.error,
        "manifest": manifest if finished else None,
        "problem_hash": manifest.get("problem_hash"),
        "problem_revision": manifest.get("problem_revision"),
        "job": None,
        "notify": False,
        "created_at": _time(record.created_at),
        "finished_at": _time(record.finished_at),
    }


def _stored(record: SubmissionRecord, row: GradingRecord) -> dict[str, Any]:
    status = row.status
    if status == GRADING_QUEUED and record.status is Status.RUNNING:
        status = Status.RUNNING.value
    manifest = row.manifest
    current = row.number == record.grading
    return {
        "number": row.number,
        "status": status,
        "current": current,
        "regrade": row.number > 1,
        "verdict": row.verdict,
        "result": record.result if current else row.result,  # a current grading's is the submission's
        "error": row.error,
        "manifest": manifest,
        "problem_hash": manifest.get("problem_hash") if manifest else row.accepted_hash,
        "problem_revision": manifest.get("problem_revision") if manifest else row.accepted_revision,
        "job": row.job_id,
        "notify": row.notify,
        "created_at": _time(row.created_at),
        "finished_at": _time(row.finished_at),
    }


def gradings_json(record: SubmissionRecord, rows: Sequence[GradingRecord]) -> dict[str, Any]:
    items = [_stored(record, row) for row in rows] if rows else [_first(record)]
    return {"submission": record.id, "current": record.grading, "items": items}


def job_json(job: JobRecord) -> dict[str, Any]:
    return {
        "id": job.id,
        "problem": job.problem,
        "problem_hash": job.problem_hash,
        "problem_revision": job.problem_revision,
        "force": job.force,
        "notify": job.notify,
        "batch": job.batch,
        "state": job.state,
        "total": job.total,
        "queued": job.queued,
        "graded": job.graded,
        "failed": job.failed,
        "in_flight": job.in_flight,
        "remaining": 0 if job.state == "done" else max(0, job.total - job.queued),
        "created_at": _time(job.created_at),
        "finished_at": _time(job.finished_at),
        "links": {"self": f"/api/v1/regrades/{job.id}"},
    }
