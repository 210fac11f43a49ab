"""Typed results of grading: one per case and one for the submission (shared by the CLI and the API)."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from judge.verdicts import Verdict, WrongAnswerReason

Visibility = Literal["public", "hidden", "custom"]


def _finite_or_none(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


#: A measurement that is a finite number or absent: NaN and infinities become None, so a result always
#: serializes to standard JSON (strict parsers, browsers included, reject NaN and Infinity).
FiniteOrNone = Annotated[float | None, BeforeValidator(_finite_or_none)]


class LeafValue(BaseModel):
    """A value shown to the user: full-precision JSON plus the 6-decimal text the statement uses."""

    model_config = ConfigDict(frozen=True)

    json_value: Any = Field(serialization_alias="json")
    text: str


class CaseResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    visibility: Visibility
    verdict: Verdict
    reason: WrongAnswerReason | None = None
    message: str = ""
    compile_ms: FiniteOrNone = None
    run_ms: FiniteOrNone = None
    #: Public and custom cases only; always None for hidden cases.
    input: dict[str, Any] | None = None
    output: LeafValue | None = None
    expected: LeafValue | None = None
    #: Largest element error as a multiple of the tolerance (for authors' margins). None when no finite
    #: ratio exists: the values were not compared (a structure, shape or dtype mismatch, an error, not run)
    #: or no tolerance covers the difference (NaN against a number, a wrong infinity, an integer leaf that
    #: differs); ``reason`` says which.
    error_ratio: FiniteOrNone = None


class GradeResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    problem: str
    verdict: Verdict
    passed: int
    total: int
    message: str = ""
    cases: list[CaseResult]
    #: What the submission printed (stdout and stderr), capped; hidden-case output is withheld.
    stdout: str = ""
    stdout_truncated: bool = False
    backend: str
    elapsed_ms: float

    @property
    def accepted(self) -> bool:
        return self.verdict is Verdict.ACCEPTED
