"""Typed results of grading: one per case and one for the submission (shared by the CLI and the API)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from judge.verdicts import Verdict, WrongAnswerReason

Visibility = Literal["public", "hidden", "custom"]


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
    compile_ms: float | None = None
    run_ms: float | None = None
    #: Public and custom cases only; always None for hidden cases.
    input: dict[str, Any] | None = None
    output: LeafValue | None = None
    expected: LeafValue | None = None
    #: Largest element error as a multiple of the tolerance (for authors' margins); None when not compared.
    error_ratio: float | None = None


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
