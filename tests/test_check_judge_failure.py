"""``judge check`` never blames a package for the judge's load: a solution the judge could not grade is
graded again, and if the judge still fails the run exits with the judge-failure code and says why, with no
finding filed on the solution's file."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import judge.check.solutions_check as solutions_check
from judge.check import CheckReport
from judge.check.context import CheckContext, SolutionGrade
from judge.check.diagnostics import Diagnostics
from judge.check.formats import render
from judge.check.runner import EXIT_JUDGE_FAILED, ProblemReport
from judge.core.problems import load_problem
from judge.core.results import GradeResult
from judge.core.verdicts import Verdict
from sandbox.errors import ProcessStartError
from tests.test_check_broken import SLUG, copy_problem


class _Grades:
    """Stands for the grader: the judge fails ``failures`` times (raising, or an internal_error verdict),
    then grades the solution ``verdict``."""

    def __init__(self, failures: int, verdict: Verdict = Verdict.ACCEPTED, *, internal: bool = False) -> None:
        self.failures = failures
        self.verdict = verdict
        self.internal = internal
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls <= self.failures:
            if self.internal:
                return SimpleNamespace(verdict=Verdict.INTERNAL_ERROR, message="the executor was lost")
            raise ProcessStartError("no ready bwrap worker: nothing progressed for 60 s")
        return SimpleNamespace(verdict=self.verdict, message="")


@pytest.fixture
def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CheckContext:
    monkeypatch.setattr(solutions_check, "_RETRY_PAUSE_S", 0.0)
    root = copy_problem(tmp_path)
    return CheckContext(root=root, diag=Diagnostics(SLUG, tmp_path), problem=load_problem(root))


def _solution(ctx: CheckContext) -> Path:
    return ctx.root / "solutions" / "accepted" / "tree_util_map.py"


@pytest.mark.parametrize("internal", [False, True])
def test_a_grading_the_judge_failed_is_tried_again(
    ctx: CheckContext, monkeypatch: pytest.MonkeyPatch, internal: bool
) -> None:
    grades = _Grades(2, internal=internal)
    monkeypatch.setattr(solutions_check, "grade", grades)
    graded = solutions_check._grade_one(ctx, None, "accepted", _solution(ctx))  # type: ignore[arg-type]
    assert grades.calls == 3
    assert not graded.judge_failed and graded.result is not None
    assert graded.result.verdict is Verdict.ACCEPTED


def test_a_judge_that_keeps_failing_is_its_own_failure_not_the_packages(
    ctx: CheckContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    grades = _Grades(10**6)
    monkeypatch.setattr(solutions_check, "grade", grades)
    graded = solutions_check._grade_one(ctx, None, "accepted", _solution(ctx))  # type: ignore[arg-type]
    assert grades.calls == solutions_check._GRADE_ATTEMPTS
    assert graded.judge_failed and graded.result is None
    assert graded.error is not None and "ProcessStartError" in graded.error and "3 tries" in graded.error
    solutions_check._judge(ctx, graded)
    assert ctx.diag.findings == [], "the judge's failure was filed on the solution"
    report = CheckReport((_report(ctx, graded),))
    assert report.exit_code == EXIT_JUDGE_FAILED == 3
    assert not report.ok
    text = render(report, "text")
    assert "the judge failed: it could not grade 1 solution even after retries" in text
    assert "accepted/tree_util_map.py: ProcessStartError" in text
    data = json.loads(render(report, "json"))
    assert data["ok"] is False and len(data["judge_failures"]) == 1


def test_a_solution_graded_in_full_is_still_judged_on_its_verdict(ctx: CheckContext) -> None:
    graded = GradeResult(
        problem=SLUG,
        verdict=Verdict.WRONG_ANSWER,
        passed=0,
        total=0,
        cases=[],
        backend="fake",
        elapsed_ms=0.0,
    )
    wrong = SolutionGrade("accepted", _solution(ctx), graded)
    solutions_check._judge(ctx, wrong)
    assert [f.message for f in ctx.diag.findings] == ["expected accepted, got wrong_answer"]
    assert CheckReport((_report(ctx, wrong),)).judge_failures == []


def _report(ctx: CheckContext, graded: SolutionGrade) -> ProblemReport:
    return ProblemReport(SLUG, ctx.root, (), (), 0.0, (graded,))
