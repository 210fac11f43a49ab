"""What the page receives is strict JSON: browsers' JSON.parse rejects Infinity and NaN."""

from __future__ import annotations

import json
import math

from judge.results import CaseResult, GradeResult
from judge.verdicts import Verdict, WrongAnswerReason


def result_with(ratio: float) -> GradeResult:
    case = CaseResult(
        name="bf16_large_clipped",
        visibility="hidden",
        verdict=Verdict.WRONG_ANSWER,
        reason=WrongAnswerReason.DTYPE,
        message='clipped["w"]: dtype float32, expected bfloat16',
        error_ratio=ratio,
    )
    return GradeResult(
        problem="global-norm-clipping",
        verdict=Verdict.WRONG_ANSWER,
        passed=0,
        total=1,
        cases=[case],
        backend="bwrap",
        elapsed_ms=1.0,
    )


def test_a_comparison_that_stopped_early_serialises_as_strict_json() -> None:
    result = result_with(math.inf)
    assert result.cases[0].error_ratio == math.inf  # authors' margins still see it
    data = result.model_dump(mode="json", by_alias=True)
    text = json.dumps(
        data, allow_nan=False
    )  # raised ValueError before: a 500 and an SSE the page could not parse
    assert json.loads(text)["cases"][0]["error_ratio"] is None
    assert json.loads(result.model_dump_json())["cases"][0]["error_ratio"] is None


def test_finite_ratios_are_kept() -> None:
    data = result_with(12.5).model_dump(mode="json", by_alias=True)
    assert data["cases"][0]["error_ratio"] == 12.5
    assert result_with(math.nan).model_dump(mode="json")["cases"][0]["error_ratio"] is None
