"""Stored records -> the JSON the API sends (``schemas.SubmissionPublic``), without re-validating the
stored result: it was produced by ``GradeResult.model_dump(mode="json", by_alias=True)``."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from judge.dispatch.document import submission_json
from judge.store import SubmissionRecord

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
