"""judge.grading: the verdict rules decide alone; the injected feedback step only adds to what they say."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.core.problems import ProblemSet
from judge.core.results import CaseCost, MistakeMatch, ProgramView
from judge.core.verdicts import Verdict, WrongAnswerReason
from judge.feedback.cost import CostComparison
from judge.grading.feedback_step import NO_FEEDBACK
from judge.grading.judging import Judging
from sandbox.session.reports import ProgramReport, ProgramText
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.test_interpret import LIMITS, _all_ok, _expected, _job


class _Loud:
    """A feedback step that names a mistake for every wrong output and shows a view and a cost for every
    public case, whatever they are."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def mistake(self, i: int, got: Any, reason: WrongAnswerReason | None) -> MistakeMatch | None:
        self.asked.append(i)
        return MistakeMatch(name="loud", note="always", others=0)

    def cost_mistake(
        self, i: int, figure: str, compared: CostComparison, bound: float
    ) -> MistakeMatch | None:
        return MistakeMatch(name="loud", note="always", others=0)

    def cost(self, i: int, program: ProgramReport, run_ms: float | None) -> CaseCost | None:
        return None

    def view(self, sig: int, program: ProgramReport) -> ProgramView | None:
        return ProgramView(jaxpr="j", stablehlo="s", jaxpr_marks=[], stablehlo_marks=[])


def test_the_feedback_step_changes_no_verdict_and_is_asked_only_for_wrong_answers() -> None:
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    cases = list(problem.cases)
    wrong = [{**e, "global_norm": np.array(2.0, np.float32)} for e in _expected(problem)]
    raw = _all_ok(problem, wrong)
    raw.programs[_job(problem).cases[0].sig].view = ProgramText("j", "s")
    judged = {}
    loud = _Loud()
    for name, feedback in (("off", NO_FEEDBACK), ("loud", loud)):
        judging = Judging(
            problem, cases, [c.visibility for c in cases], _expected(problem), LIMITS, _job(problem),  # type: ignore[misc]
            feedback=feedback,
        )  # fmt: skip
        judged[name] = judging.result(raw, backend="fake", elapsed_ms=1.0)
    off, on = judged["off"], judged["loud"]
    assert off.verdict is on.verdict is Verdict.WRONG_ANSWER
    strip = {"mistake", "program", "cost"}
    assert [c.model_dump(exclude=strip) for c in off.cases] == [c.model_dump(exclude=strip) for c in on.cases]
    assert all(c.mistake is None and c.program is None for c in off.cases)
    assert loud.asked == [i for i, c in enumerate(on.cases) if c.verdict is Verdict.WRONG_ANSWER]
    public = [c for c in on.cases if c.visibility != "hidden"]
    assert public and all(c.program is not None for c in public)
    assert all(c.program is None for c in on.cases if c.visibility == "hidden")
