"""The margins check on synthetic gradings: per-dtype targets and two strong hidden kills per wrong answer."""

from __future__ import annotations

import math
from pathlib import Path

from judge.check.context import CheckContext, SolutionGrade
from judge.check.diagnostics import Diagnostics
from judge.check.formats import margin_table
from judge.check.margins import ULP_BAND, VALUE_BAND, band_factor, check
from judge.core.problems import ProblemSet
from judge.core.results import CaseResult, GradeResult
from judge.core.spec import Tolerance
from judge.core.verdicts import Verdict, WrongAnswerReason
from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT

#: The test fixture package (float32 and bfloat16 hidden cases).
PROBLEM = ProblemSet(FIXTURES).get(FIXTURE_SLUG)


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
            [_wrong("bf16_long_list", 1.7), _wrong("bf16_bare_vector", 2.0), _case("example_1")],
        ),
        ("wrong_answer", [_wrong("bf16_long_list", 1.7), _wrong("matrix_and_bias", 5.0)]),
        ("accepted", [_case("bf16_long_list", ratio=0.67), _case("matrix_and_bias", ratio=0.05)]),
        ("accepted", [_case("matrix_and_bias", ratio=0.5)]),
    )
    first, second, honest, close = ctx.margins
    assert (first.strong, first.warning) == (2, "")
    assert second.strong == 1
    assert second.warning.startswith("killed by 1 hidden case at its dtype's 'well outside' margin or more")
    assert "matrix_and_bias at 5x, bf16_long_list at 1.7x" in second.warning
    assert honest.warning == "" and honest.ratio == 0.67
    assert close.warning.startswith(
        "accepted, but its error reaches 0.5x the tolerance on case matrix_and_bias"
    )
    assert [f.file for f in ctx.diag.findings] == ["/x/wrong_answer/s1.py", "/x/accepted/s3.py"]
    assert ctx.targets[0].dtype == "float32" and ctx.targets[1].well_outside == 1.5


def test_public_cases_do_not_count_and_a_non_value_failure_is_infinitely_separated() -> None:
    ctx = _run(
        (
            "wrong_answer",
            [_wrong("example_1", math.inf), _wrong("example_2", 1e6), _wrong("bare_vector", 50)],
        ),
        (
            "wrong_answer",
            [_wrong("bare_vector", None), _wrong("bf16_bare_vector", None, WrongAnswerReason.DTYPE)],
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
    ctx = _run(("wrong_answer", [_wrong("bf16_long_list", 1.7), _wrong("bf16_bare_vector", 2.0)]))
    (header, _, row) = margin_table(ctx.margins, targets=ctx.targets)
    assert "accepted want max err < 0.1x (float32), 0.7x (bfloat16) tol" in header
    assert "wrong_answer want 2+ hidden cases (strong) at >= 10x (float32), 1.5x (bfloat16) tol" in header
    assert "2/2 reject, 2 strong" in row and "best 2x tol" in row


# ------------------------------------------------------------------------------------------ safety band


def _accepted_at(ratio: float, case: str = "matrix_and_bias") -> str:
    (row,) = _run(("accepted", [_case(case, ratio=ratio)])).margins
    return row.warning


def _killed_at(
    first: float, second: float, cases: tuple[str, str] = ("matrix_and_bias", "bare_vector")
) -> str:
    (row,) = _run(("wrong_answer", [_wrong(cases[0], first), _wrong(cases[1], second)])).margins
    return row.warning


def test_an_accepted_error_a_hair_under_its_threshold_warns_as_within_the_band() -> None:
    # 0.087x against float32's 0.1x: the issue's example; another machine's numerics may cross 0.1x.
    warning = _accepted_at(0.087)
    assert warning.startswith("accepted, but its error reaches 0.087x the tolerance on case matrix_and_bias")
    assert "within the safety band under its dtype's 'well inside' threshold (0.0714x to 0.1x" in warning
    assert "band factor 1.4; 1.15x below the threshold" in warning
    assert _accepted_at(0.06) == ""  # a factor 1.4 clear of the threshold: the same verdict everywhere
    assert "reaches 0.12x" in _accepted_at(0.12) and "safety band" not in _accepted_at(0.12)


def test_bfloat16_errors_in_whole_ulps_stay_clear_of_the_band() -> None:
    # 2 of 3 ulps (0.667x) is an honest variant's worst: outside the ulp band (0.7 / 1.04 = 0.673x).
    assert _accepted_at(2 / 3, "bf16_long_list") == ""
    assert "safety band" in _accepted_at(0.69, "bf16_long_list")


def test_only_a_tolerance_of_ulps_alone_gets_the_narrow_ulp_band() -> None:
    # bfloat16's 3 ulps (floor 1.5): errors in whole ulps of an element, the narrow band.
    assert band_factor(Tolerance(ulps=3, floor_ulps=1.5)) == ULP_BAND
    # float32's rtol/atol with a floor of ulps beside it (rotary-embedding's 32768, ema-scan's 16): errors
    # of many roundings, continuous; a 0.0998x measurement against 0.1x must not pass as clear of the band.
    assert band_factor(Tolerance(rtol=1e-5, atol=1e-6, floor_ulps=32768)) == VALUE_BAND
    assert band_factor(Tolerance(rtol=3e-5, atol=1e-6, floor_ulps=16)) == VALUE_BAND
    assert band_factor(Tolerance(rtol=1e-5, atol=1e-6)) == VALUE_BAND


def test_a_wrong_answer_killed_just_past_its_threshold_warns_as_within_the_band() -> None:
    warning = _killed_at(11.0, 12.0)
    assert warning.startswith(
        "killed by 2 hidden cases at its dtype's 'well outside' margin or more, but only 0 beyond its "
        "safety band (the threshold times the band factor: 14x (float32), 1.56x (bfloat16))"
    )
    assert (
        "bare_vector at 12x, 1.2x its threshold 10x, matrix_and_bias at 11x, 1.1x its threshold 10x"
        in warning
    )
    assert "only 1 beyond" in _killed_at(11.0, 40.0)
    assert _killed_at(16.0, 40.0) == ""
    assert _killed_at(1.7, 2.0, ("bf16_long_list", "bf16_bare_vector")) == ""
    assert "safety band" in _killed_at(1.52, 2.0, ("bf16_long_list", "bf16_bare_vector"))


def test_a_margin_past_its_threshold_on_one_machine_warns_on_every_machine_within_the_band() -> None:
    # The band's guarantee: measurements differing by less than the band factor (another machine's
    # numerics) never split into "past the threshold" on one and "no warning" on the other, so --werror
    # (band findings are warnings) is red on both or green on neither's side of the threshold.
    for base in (0.05, 0.07, 0.09, 0.1, 0.11, 0.14):
        for spread in (1.0, 1.1, 1.3, 1.39):
            for here, there in ((base, base * spread), (base * spread, base)):
                past_there = "safety band" not in _accepted_at(there) and _accepted_at(there) != ""
                if past_there:
                    assert _accepted_at(here) != "", (here, there)
    for base in (9.0, 10.5, 12.0, 14.0, 16.0):
        for spread in (1.0, 1.2, 1.39):
            low, high = base / spread, base
            if _killed_at(low, low).startswith("killed by 0"):
                assert _killed_at(high, high) != "", (low, high)
    findings = _run(("accepted", [_case("matrix_and_bias", ratio=0.09)])).diag.findings
    assert [f.severity.value for f in findings] == ["warning"]  # fails --werror like the threshold's own
