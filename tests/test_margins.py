"""The margins check on synthetic gradings: per-dtype targets and two strong hidden kills per wrong answer."""

from __future__ import annotations

import math
from pathlib import Path

from judge.check.context import CheckContext, SolutionGrade
from judge.check.diagnostics import Diagnostics
from judge.check.formats import margin_table
from judge.check.margins import check
from judge.problems import ProblemSet
from judge.results import CaseResult, GradeResult
from judge.verdicts import Verdict, WrongAnswerReason
from tests.conftest import ROOT

PROBLEM = ProblemSet(ROOT / "problems").get("global-norm-clipping")


def _case(
    name: str, verdict: Verdict = Verdict.ACCEPTED, ratio: float | None = 0.0, **kw: object
) -> CaseResult:
    visibility = next(c.visibility for c in PROBLEM.cases if c.name == name)
    return CaseResult(name=name, visibility=visibility, verdict=verdict, error_ratio=ratio, **kw)  # type: ignore[arg-type]


def _grade(cases: list[CaseResult]) -> GradeResult:
    failing = [c for c in cases if c.verdict is not Verdict.ACCEPTED]
    return GradeResult(
        problem=PROBLEM.slug,
        verdict=failing[0].verdict if failing else Verdict.ACCEPTED,
        passed=len(cases) - len(failing),
        total=len(cases),
        cases=cases,
        backend="test",
        elapsed_ms=1.0,
    )


def _run(*graded: tuple[str, list[CaseResult]]) -> CheckContext:
    ctx = CheckContext(root=PROBLEM.root, diag=Diagnostics(PROBLEM.slug, ROOT), problem=PROBLEM)
    ctx.diag.check = "margins"
    for i, (folder, cases) in enumerate(graded):
        ctx.grades.append(SolutionGrade(folder, Path(f"/x/{folder}/s{i}.py"), _grade(cases)))
    check(ctx)
    return ctx


def _wrong(name: str, ratio: float | None, reason: WrongAnswerReason = WrongAnswerReason.VALUE) -> CaseResult:
    return _case(name, Verdict.WRONG_ANSWER, ratio, reason=reason)


def test_bf16_cases_want_their_own_margins() -> None:
    # 1.7x on two bfloat16 hidden cases is a strong kill; 5x on a float32 case is not (float32 wants 10x).
    ctx = _run(
        (
            "wrong_answer",
            [_wrong("bf16_large_clipped", 1.7), _wrong("bf16_bare_vector", 2.0), _case("example_1")],
        ),
        ("wrong_answer", [_wrong("bf16_large_clipped", 1.7), _wrong("large_random_clipped", 5.0)]),
        ("accepted", [_case("bf16_large_clipped", ratio=0.67), _case("large_random_clipped", ratio=0.05)]),
        ("accepted", [_case("large_random_clipped", ratio=0.5)]),
    )
    first, second, honest, close = ctx.margins
    assert (first.strong, first.warning) == (2, "")
    assert second.strong == 1
    assert second.warning.startswith("killed by 1 hidden case at its dtype's 'well outside' margin or more")
    assert "large_random_clipped at 5x, bf16_large_clipped at 1.7x" in second.warning
    assert honest.warning == "" and honest.ratio == 0.67
    assert close.warning.startswith(
        "accepted, but its error reaches 0.5x the tolerance on case large_random_clipped"
    )
    assert [f.file for f in ctx.diag.findings] == ["/x/wrong_answer/s1.py", "/x/accepted/s3.py"]
    assert ctx.targets[0].dtype == "float32" and ctx.targets[1].well_outside == 1.5


def test_public_cases_do_not_count_and_a_non_value_failure_is_infinitely_separated() -> None:
    ctx = _run(
        (
            "wrong_answer",
            [_wrong("example_1", math.inf), _wrong("example_2", 1e6), _wrong("bare_vector_clipped", 50)],
        ),
        (
            "wrong_answer",
            [_wrong("bare_vector_clipped", None), _wrong("bf16_bare_vector", None, WrongAnswerReason.DTYPE)],
        ),
    )
    public_only, strong = ctx.margins
    assert (
        public_only.strong == 1
        and public_only.rejecting == 3
        and "killed by 1 hidden case" in public_only.warning
    )
    assert strong.strong == 2 and strong.warning == "" and strong.ratio == math.inf


def test_the_table_states_the_targets_per_dtype() -> None:
    ctx = _run(("wrong_answer", [_wrong("bf16_large_clipped", 1.7), _wrong("bf16_bare_vector", 2.0)]))
    (header, _, row) = margin_table(ctx.margins, targets=ctx.targets)
    assert "accepted want max err < 0.1x (float32), 0.7x (bfloat16) tol" in header
    assert "wrong_answer want 2+ hidden cases (strong) at >= 10x (float32), 1.5x (bfloat16) tol" in header
    assert "2/2 reject, 2 strong" in row and "best 2x tol" in row
