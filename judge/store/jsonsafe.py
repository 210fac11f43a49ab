"""Results as strict JSON: what the store keeps, the API sends and ``judge grade/run --json`` print.

``GradeResult.model_dump(mode="json")`` may hold non-finite floats (an ``error_ratio`` of infinity when a
leaf differs where the tolerance is zero). Strict JSON (and PostgreSQL's JSONB) has no such numbers, so an
``error_ratio`` that is not finite becomes ``null`` (no finite margin), and any other non-finite float
becomes the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``, as output values already are. Lone
surrogates (which no encoder accepts) become their visible escapes (``judge.display.sanitize_json``).
"""

from __future__ import annotations

import math
from typing import Any

from judge.display import sanitize_json
from judge.results import CaseResult, GradeResult

_NULL_WHEN_NOT_FINITE = frozenset({"error_ratio"})


def _text(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def json_safe(value: Any, key: str | None = None) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None if key in _NULL_WHEN_NOT_FINITE else _text(value)
    if isinstance(value, dict):
        return {k: json_safe(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value


def result_json(result: GradeResult) -> dict[str, Any]:
    """The result as strict JSON, in the shape of ``judge grade --json``."""
    data: dict[str, Any] = sanitize_json(json_safe(result.model_dump(mode="json", by_alias=True)))
    return data


def case_json(case: CaseResult) -> dict[str, Any]:
    data: dict[str, Any] = sanitize_json(json_safe(case.model_dump(mode="json", by_alias=True)))
    return data
