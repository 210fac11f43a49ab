"""The feedback step: what a grading tells besides its verdicts, injected into the verdict rules.

A known mistake a wrong output looks like (``judge.feedback.mistakes``), the known mistake that costs as much
as a program the cost rule refuses (``judge.feedback.known_costs``), the cost of what a public case compiled
to beside the reference's (``judge.feedback.cost``) and the public program's text (``judge.feedback
.program_view``). Feedback is extra: a finder that fails names nothing, and ``NO_FEEDBACK`` (the
``interpret`` path, and ``grade(feedback=False)``) gives every verdict unchanged. Only names and notes of
mistakes come out, so they are the same for a hidden case; costs and views are for public cases only
(``judging.Judging`` asks for them there).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from judge.core.problems import Case, Problem
from judge.core.results import CaseCost, MistakeMatch, ProgramMark, ProgramView
from judge.core.verdicts import WrongAnswerReason
from judge.feedback.cost import CostComparison
from judge.feedback.matching import Match
from judge.feedback.program_view import marks
from judge.grading.cost_rule import comparison
from judge.grading.outcome import MATCHED_REASONS
from sandbox.session.monitor import SessionJob
from sandbox.session.reports import ProgramReport


class Feedback(Protocol):
    def mistake(self, i: int, got: Any, reason: WrongAnswerReason | None) -> MistakeMatch | None:
        """The known mistake a wrong output of case i (by structure, shape, dtype or value) looks like."""

    def cost_mistake(
        self, i: int, figure: str, compared: CostComparison, bound: float
    ) -> MistakeMatch | None:
        """The known mistake that breaks the cost rule on case i on the same figure with the nearest
        value (a right answer that costs too much has no output to match)."""

    def cost(self, i: int, program: ProgramReport, run_ms: float | None) -> CaseCost | None:
        """The cost of what public case i compiled to, beside the reference's."""

    def view(self, sig: int, program: ProgramReport) -> ProgramView | None:
        """The program view of a public signature."""


class NoFeedback:
    """Feedback off: nothing is named or shown beside the verdicts."""

    def mistake(self, i: int, got: Any, reason: WrongAnswerReason | None) -> MistakeMatch | None:
        return None

    def cost_mistake(
        self, i: int, figure: str, compared: CostComparison, bound: float
    ) -> MistakeMatch | None:
        return None

    def cost(self, i: int, program: ProgramReport, run_ms: float | None) -> CaseCost | None:
        return None

    def view(self, sig: int, program: ProgramReport) -> ProgramView | None:
        return None


NO_FEEDBACK: Feedback = NoFeedback()


@dataclass
class FeedbackStep:
    """Feedback on: the finders of known mistakes, and the costs and views of public programs."""

    problem: Problem
    case_list: Sequence[Case]
    job: SessionJob
    #: Which known mistake a wrong output on case i looks like (``judge.feedback.mistakes``).
    mistakes: Callable[[int, Any], Match | None]
    #: Which known mistake a program the cost rule refuses on case i looks like, from the figure that
    #: broke it, its value and the most the rule allows (``judge.feedback.known_costs``).
    cost_mistakes: Callable[[int, str, float, float], Match | None]
    _views: dict[int, ProgramView | None] = field(default_factory=dict, init=False)

    def mistake(self, i: int, got: Any, reason: WrongAnswerReason | None) -> MistakeMatch | None:
        if reason not in MATCHED_REASONS:
            return None
        try:
            match = self.mistakes(i, got)
        except Exception:  # feedback is extra: the verdict stands without it
            return None
        if match is None:
            return None
        return MistakeMatch(name=match.mistake.name, note=match.mistake.note, others=match.others)

    def cost_mistake(
        self, i: int, figure: str, compared: CostComparison, bound: float
    ) -> MistakeMatch | None:
        mine = compared.flops if figure == "flops" else compared.bytes_accessed
        reference = compared.reference_flops if figure == "flops" else compared.reference_bytes_accessed
        if mine is None or reference is None:
            return None
        try:
            match = self.cost_mistakes(i, figure, mine, bound * reference)
        except Exception:  # feedback is extra: the verdict stands without it
            return None
        if match is None:
            return None
        return MistakeMatch(name=match.mistake.name, note=match.mistake.note, others=match.others)

    def cost(self, i: int, program: ProgramReport, run_ms: float | None) -> CaseCost | None:
        try:
            compared = comparison(self.problem, self.case_list[i], program, run_ms)
        except Exception:  # feedback is extra: the verdict stands without it
            return None
        return None if compared is None else CaseCost(**dataclasses.asdict(compared))

    def view(self, sig: int, program: ProgramReport) -> ProgramView | None:
        """The tracer's text of a public signature, before anything hidden reached it; None for a secret
        signature, whatever the tracer sent. One per signature."""
        if self._views.get(sig) is None:  # the views come after the programs: a case may be sent before
            self._views[sig] = self._new_view(sig, program)
        return self._views[sig]

    def _new_view(self, sig: int, program: ProgramReport) -> ProgramView | None:
        view = program.view
        if view is None or self.job.sig(sig).secret:
            return None
        jaxpr, stablehlo = view.jaxpr, view.stablehlo
        return ProgramView(
            jaxpr=jaxpr,
            stablehlo=stablehlo,
            jaxpr_marks=[ProgramMark(line=m.line, kind=m.kind) for m in marks(jaxpr, "jaxpr")],
            stablehlo_marks=[ProgramMark(line=m.line, kind=m.kind) for m in marks(stablehlo, "stablehlo")],
        )
