"""Stored records -> the JSON the API sends (``schemas.SubmissionPublic``), without re-validating the
stored result: it was produced by ``GradeResult.model_dump(mode="json", by_alias=True)``."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from judge.store import SubmissionRecord
from judge.store.manifest import version_note

#: What a listing item holds by default (``schemas.SubmissionSummary``).
SUMMARY_FIELDS = (
    "id",
    "problem",
    "status",
    "verdict",
    "attempts",
    "created_at",
    "started_at",
    "finished_at",
    "external_user",
    "tags",
    "regrade_of",
    "grading",
    "links",
)
#: Every field ``?fields=`` may name: a submission's own fields, its ``callback`` delivery record (as a
#: read without ``fields`` has it) and its ``code``.
SELECTABLE_FIELDS = frozenset(
    (*SUMMARY_FIELDS, "result", "error", "manifest", "version_mismatch", "callback", "code")
)


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


def parse_fields(text: str | None) -> tuple[str, ...] | None:
    """``id,status,verdict`` -> the names in order (None: no selection). Raises ValueError naming an
    unknown field."""
    if text is None or not text.strip():
        return None
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [name for name in names if name not in SELECTABLE_FIELDS]
    if unknown:
        known = ", ".join(sorted(SELECTABLE_FIELDS))
        raise ValueError(f"unknown field {unknown[0][:64]!r} (known: {known})")
    return names


def selected(
    record: SubmissionRecord,
    names: Collection[str] | None,
    default: Collection[str],
    callback: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The submission's JSON with only ``names`` (else ``default``); ``code`` only when named;
    ``callback``: its delivery record (None: it has no callback_url)."""
    document = submission_json(record)
    chosen = default if names is None else names
    document["code"] = record.code
    document["callback"] = callback
    return {name: document[name] for name in chosen}
