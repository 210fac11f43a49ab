"""Judging one grading: the case results, in order, from the session's record (so far, or final).

``Judging.cases`` gives the prefix of results already known (the streaming asks with ``final=False`` as the
record grows; the result with ``final=True``); each case's verdict comes from the verdict rules
(``verdict_rules.VerdictRules``), a run that stopped early from ``stops``, a load error from ``claims``;
the injected feedback step (``feedback_step``) adds the cost and program view of a public case.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from judge.core.errors import ReferenceFailure
from judge.core.hidden import one_hidden_mistake
from judge.core.problems import Case, Problem
from judge.core.results import CaseResult, GradeResult, LeafValue, Visibility
from judge.core.verdicts import STOPS_RUN, Verdict
from judge.feedback.printed import printed_sections
from judge.grading import stops
from judge.grading.claims import load_failure
from judge.grading.feedback_step import NO_FEEDBACK, Feedback
from judge.grading.program_rules import peers_settled
from judge.grading.verdict_rules import VerdictRules
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.monitor import SessionJob
from sandbox.session.reports import RawRun


@dataclass
class Judging:
    """One grading's cases, their visibility and expected outputs, and the rules that judge them."""

    problem: Problem
    case_list: Sequence[Case]
    visibility: Sequence[Visibility]
    expected: Sequence[Any]
    limits: SandboxLimits
    job: SessionJob
    author: bool = False
    #: The reference's gradient per case (``[gradient]`` problems), else None.
    gradients: Sequence[Any] | None = None
    #: Where the reference's output leaves live, per case (``judge.core.shardings``), else None.
    layouts: Sequence[Any] | None = None
    #: Per case, the magnitude of the terms of each output element, else None (``VerdictRules.scales``).
    scales: Sequence[Any] | None = None
    #: Known mistakes, costs and program views (``feedback_step.FeedbackStep``); off by default.
    feedback: Feedback = NO_FEEDBACK
    verdicts: VerdictRules = field(init=False)
    _cache: dict[int, CaseResult] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.verdicts = VerdictRules(
            self.problem,
            self.case_list,
            self.expected,
            self.limits,
            self.job,
            gradients=self.gradients,
            layouts=self.layouts,
            scales=self.scales,
            feedback=self.feedback,
        )

    # -------------------------------------------------------------------------------------- the result

    def result(self, raw: RawRun, *, backend: str, elapsed_ms: float) -> GradeResult:
        load_error = self._load_error(raw)
        case_results = self.cases(raw, final=True)
        if not self.author:
            case_results = one_hidden_mistake(case_results)
        verdict = load_error[0] if load_error else _first_failure(case_results)
        summary = load_error[1] if load_error else ""
        failing = next((c for c in case_results if c.verdict == verdict), None)
        if not summary and failing is not None and verdict is not Verdict.ACCEPTED:
            summary = f"case {failing.name}: {failing.message}"
        stdout, truncated = _visible_output(raw)
        return GradeResult(
            problem=self.problem.slug,
            verdict=verdict,
            passed=sum(c.verdict is Verdict.ACCEPTED for c in case_results),
            total=len(self.case_list),
            message=summary,
            cases=case_results,
            stdout=stdout,
            stdout_truncated=truncated,
            output=printed_sections(raw, self.job, self.visibility),
            backend=backend,
            elapsed_ms=round(elapsed_ms, 1),
        )

    def cases(self, raw: RawRun, *, final: bool) -> list[CaseResult]:
        """Case results in order; with ``final=False`` only the prefix whose outcome is already known."""
        out: list[CaseResult] = []
        if self._load_error(raw) is not None:
            return (
                [_not_run(c, v) for c, v in zip(self.case_list, self.visibility, strict=True)]
                if final
                else []
            )
        if raw.load is None and not final:
            return []
        stop = raw.stop
        stopped = False
        for i, case in enumerate(self.case_list):
            vis = self.visibility[i]
            if stopped:
                out.append(_not_run(case, vis))
                continue
            known = self._known(raw, i)
            if stop is not None and stop.case is not None and i >= stop.case and not known:
                if i == stop.case:
                    verdict, text = stops.stopped(raw, stop, self.limits, hidden=vis == "hidden")
                    out.append(
                        _shown(
                            case,
                            vis,
                            CaseResult(name=case.name, visibility=vis, verdict=verdict, message=text),
                        )
                    )
                    stopped = True
                else:
                    out.append(_not_run(case, vis))
                continue
            if not known:
                if not final:
                    break
                out.append(_not_run(case, vis))
                continue
            result = self._cache.get(i)
            if result is None:
                result = self._case(raw, i)
                if self._settled(raw, i):
                    self._cache[i] = result
            out.append(result)
            stopped = result.verdict in STOPS_RUN
        return out

    def _known(self, raw: RawRun, i: int) -> bool:
        """Case i's outcome is in: its program failed or was refused, or its run came back (and, for the
        case used to re-trace, the re-trace's outcome too, unless the run is over)."""
        plan = self.job.cases[i]
        program = raw.programs.get(plan.sig)
        if program is None:
            return False
        verdicts = self.verdicts
        if (verdicts.batched is not None or verdicts.stepped is not None) and not peers_settled(
            raw, self.job, plan.sig
        ):
            return False
        if program.failure is not None or program.refused is not None:
            return True
        if i not in raw.runs:
            return False
        return i != self.job.retrace_case or self._retrace_settled(raw)

    def _settled(self, raw: RawRun, i: int) -> bool:
        return i != self.job.retrace_case or self._retrace_settled(raw)

    @staticmethod
    def _retrace_settled(raw: RawRun) -> bool:
        retrace = raw.retrace
        if raw.retrace_run is not None:
            return True
        if retrace is not None and (retrace.failure is not None or retrace.refused is not None):
            return True
        return raw.executor_healthy or raw.stop is not None

    # -------------------------------------------------------------------------------------- one case

    def _case(self, raw: RawRun, i: int) -> CaseResult:
        case, vis = self.case_list[i], self.visibility[i]
        plan = self.job.cases[i]
        program = raw.programs[plan.sig]
        first_of_sig = self.job.first_case(plan.sig) == i
        run = raw.runs.get(i)
        outcome = self.verdicts.outcome(raw, i, program, vis)
        compile_ms = None
        # A hidden case carries no time of its own, not even its program's compile (authors excepted).
        timed_here = vis != "hidden" or self.author
        if program.compiled is not None and first_of_sig and timed_here:
            # The tracer's own trace time is its claim: shown for public cases only.
            traced = program.trace_ms or 0.0 if vis != "hidden" else 0.0
            compile_ms = (program.compiled.compile_ms or 0.0) + traced
        elif program.compiled is not None and timed_here:
            compile_ms = 0.0
        show_run = vis != "hidden" or self.author
        result = CaseResult(
            name=case.name,
            visibility=vis,
            verdict=outcome.verdict,
            reason=outcome.reason,
            message=outcome.message,
            compile_ms=round(compile_ms, 3) if compile_ms is not None else None,
            run_ms=run.run_ms if run is not None and show_run else None,
            error_ratio=outcome.error_ratio if show_run else None,
            mistake=outcome.mistake,
            # Feedback (a finder given): the cost of what a learner's case compiled to; hidden cases none.
            cost=(
                self.feedback.cost(i, program, run.run_ms if run is not None and show_run else None)
                if vis != "hidden"
                else None
            ),
            program=self.feedback.view(plan.sig, program) if vis != "hidden" else None,
        )
        return _shown(case, vis, result, outcome.got, self.expected[i])

    def _load_error(self, raw: RawRun) -> tuple[Verdict, str] | None:
        if raw.load is not None and raw.load.failed:
            return load_failure(raw.load)
        if raw.load is None and raw.stop is not None:
            return stops.stopped(raw, raw.stop, self.limits)
        return None


# ------------------------------------------------------------------------------------------ helpers


def _first_failure(cases: Sequence[CaseResult]) -> Verdict:
    for case in cases:
        if case.verdict not in (Verdict.ACCEPTED, Verdict.NOT_RUN):
            return case.verdict
    return Verdict.ACCEPTED


def _not_run(case: Case, vis: Visibility) -> CaseResult:
    return CaseResult(name=case.name, visibility=vis, verdict=Verdict.NOT_RUN, message="not run")


def _shown(
    case: Case, vis: Visibility, result: CaseResult, output: Any = None, expected: Any = None
) -> CaseResult:
    """Attach input, output and expected values for public and custom cases; hidden ones show none."""
    if vis == "hidden":
        return result
    update: dict[str, Any] = {"input": dict(case.definition.args)}
    if output is not None:
        update["output"] = LeafValue.of(output)
    if expected is not None and not isinstance(expected, ReferenceFailure):
        update["expected"] = LeafValue.of(expected)
    return result.model_copy(update=update)


def _visible_output(raw: RawRun) -> tuple[str, bool]:
    """Captured output up to the moment the tracer was given anything hidden."""
    cut = len(raw.output) if raw.output_cut is None else min(raw.output_cut, len(raw.output))
    truncated = raw.output_truncated
    text = raw.output[:cut].decode(errors="replace")
    if raw.output_cut is not None and (cut < len(raw.output) or raw.output_total > cut):
        text += "\n[... output printed while hidden cases were traced is not shown ...]"
        truncated = True
    elif truncated:
        text += "\n[... output was cut at the limit ...]"
    return text, truncated
