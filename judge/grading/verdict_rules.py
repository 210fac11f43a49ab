"""The verdict rules: one case's verdict from the session's record and the reference, pure of feedback.

In order: the judge's own failures (no expected output, gradient, magnitudes), the tracer's claim for its
own failure (``claims``), the executor's refusal, the rules on the compiled program
(``judge.grading.compiled_rules``, then the rules against earlier programs, ``program_rules``), the cost rule
(``cost_rule``), the run's own failure, idle loops and recomputation, the comparison with the expected output
(and its gradient), the autodiff rule, the output's sharding, a mutated input, and the re-trace. The feedback
step (``feedback_step``) is injected only to name the known mistake beside a wrong answer: the verdict, reason
and message never depend on it. Never raises: a crashing checker is the judge's own ``internal_error``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from judge.core.compare import Checker, CompareResult, bind
from judge.core.errors import ReferenceFailure
from judge.core.gradients import compare_with_gradient
from judge.core.hidden import hidden_message, ratio_bucket
from judge.core.problems import Case, Problem
from judge.core.results import MistakeMatch, Visibility
from judge.core.shardings import misplaced
from judge.core.spec import AutodiffRule, BatchedRule, ForbidOpsRule, LoopRule
from judge.core.verdicts import Verdict, WrongAnswerReason
from judge.grading.claims import claim, refused
from judge.grading.compiled_rules import (
    ProgramSummary,
    Rule,
    broken_rule,
    idle_loops_message,
    remat_message,
    rules_for,
)
from judge.grading.cost_rule import comparison, over_cost
from judge.grading.feedback_step import NO_FEEDBACK, Feedback
from judge.grading.outcome import Outcome
from judge.grading.outputs import empty_leaves_matter, leaf_count, leaf_sizes, read_output
from judge.grading.program_rules import unbatched, unrolled
from judge.grading.transform_rules import (
    autodiff_broken,
    autodiff_rule,
    autodiff_scale,
    batched_rule,
    split_autodiff,
)
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.monitor import SessionJob
from sandbox.session.reports import CaseReport, ProgramReport, RawRun

_STATE_ADVICE = (
    "the function gave another result when called a second time (traced again through a fresh jax.jit): "
    "it must not keep state across calls (globals, caches, counters)"
)


@dataclass
class VerdictRules:
    """Everything a case's verdict depends on besides the raw record."""

    problem: Problem
    case_list: Sequence[Case]
    expected: Sequence[Any]
    limits: SandboxLimits
    job: SessionJob
    #: The reference's gradient per case (``[gradient]`` problems), else None.
    gradients: Sequence[Any] | None = None
    #: Where the reference's output leaves live, per case (``judge.core.shardings``): problems of more than
    #: one device only, else None.
    layouts: Sequence[Any] | None = None
    #: Per case, the magnitude of the terms of each output element (``judge.core.spec.CompareSpec.magnitude``;
    #: a ReferenceFailure where it failed), or None for a problem without a magnitude function.
    scales: Sequence[Any] | None = None
    #: Names the known mistake beside a wrong answer (``feedback_step``); the verdicts never depend on it.
    feedback: Feedback = NO_FEEDBACK
    checker: Checker = field(init=False)
    rules: list[Rule] = field(init=False)
    #: The transformation rules (``judge.grading.transform_rules``) the problem declares, if any.
    autodiff: AutodiffRule | None = field(init=False)
    batched: BatchedRule | None = field(init=False)
    #: The ``require_loop`` rule with a bound on steps (``LoopRule.steps``), if the problem has one.
    stepped: LoopRule | ForbidOpsRule | None = field(init=False)
    #: The submission's source lines (for a hidden case's composed message, ``claims``).
    lines: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.checker = bind(self.problem.spec.compare, self.problem.spec.output)
        self.rules = rules_for(self.problem)
        self.autodiff = autodiff_rule(self.problem.spec)
        self.batched = batched_rule(self.problem.spec)
        self.stepped = next(
            (
                r
                for r in self.problem.spec.rules
                if isinstance(r, LoopRule | ForbidOpsRule) and r.steps is not None
            ),
            None,
        )
        self.lines = self.job.code.removeprefix("\ufeff").splitlines()

    def outcome(self, raw: RawRun, i: int, program: ProgramReport, vis: Visibility) -> Outcome:
        """The verdict of one case whose outcome is known. Never raises: a crashing checker is ours."""
        hidden = vis == "hidden"
        expected = self.expected[i]
        if isinstance(expected, ReferenceFailure):
            return Outcome(
                Verdict.INTERNAL_ERROR, f"the judge could not compute the expected output: {expected}"
            )
        expected_gradient = self.gradients[i] if self.gradients is not None else None
        if isinstance(expected_gradient, ReferenceFailure):
            return Outcome(
                Verdict.INTERNAL_ERROR,
                f"the judge could not compute the expected gradient: {expected_gradient}",
            )
        scale = self.scales[i] if self.scales is not None else None
        if isinstance(scale, ReferenceFailure):
            return Outcome(
                Verdict.INTERNAL_ERROR, f"the judge could not compute the output's magnitudes: {scale}"
            )
        if program.failure is not None:
            return claim(program.failure, hidden, self.lines)
        if program.refused is not None:
            return refused(program.refused, self.rules, self.job.max_output_bytes)
        rule = broken_rule(self.rules, ProgramSummary.from_compiled(program.compiled))
        if rule is None:
            rule = self._unbatched(raw, i, program)
        if rule is None:
            rule = self._unrolled(raw, i, program)
        if rule is not None:
            return Outcome(Verdict.WRONG_ANSWER, rule, WrongAnswerReason.RULE)
        costly = self._over_cost(i, program)
        if costly is not None:
            text, mistake = costly
            return Outcome(Verdict.WRONG_ANSWER, text, WrongAnswerReason.RULE, mistake=mistake)
        run = raw.runs[i]
        got_or_failure = self._output(program, run, hidden)
        if isinstance(got_or_failure, Outcome):
            return got_or_failure
        idle = idle_loops_message(
            self.problem, empty_leaves_matter(run.loops_matter, leaf_sizes(expected)), leaf_count(expected)
        )
        if idle is None:
            idle = remat_message(
                self.problem, ProgramSummary.from_compiled(program.compiled), leaf_count(expected)
            )
        if idle is not None:
            return Outcome(Verdict.WRONG_ANSWER, idle, WrongAnswerReason.RULE)
        again = None
        if self.autodiff is not None:
            parts = split_autodiff(got_or_failure)
            if parts is None:
                return Outcome(
                    Verdict.WRONG_ANSWER,
                    "the program did not return its output twice (the second time with autodiff seeds "
                    "scaled)",
                    WrongAnswerReason.STRUCTURE,
                )
            got_or_failure, again = parts
        try:
            compared, got = self._compare(expected, expected_gradient, got_or_failure, scale)
        except Exception as exc:
            return Outcome(Verdict.INTERNAL_ERROR, f"the checker failed: {type(exc).__name__}: {exc}")
        if not compared.ok:
            text = hidden_message(compared) if hidden else compared.message
            mistake = self.feedback.mistake(i, got_or_failure, compared.reason)
            return Outcome(
                Verdict.WRONG_ANSWER, text, compared.reason, compared.max_error_ratio, got, mistake
            )
        if self.autodiff is not None:
            broken = autodiff_broken(
                self.autodiff,
                self.problem.spec,
                self.checker,
                got_or_failure,
                again,
                hidden=hidden,
                scale=autodiff_scale(self.job.autodiff, self.job.cases[i].sig),
                magnitude=scale,
            )
            if broken is not None:
                return Outcome(
                    Verdict.WRONG_ANSWER, broken, WrongAnswerReason.RULE, compared.max_error_ratio, got
                )
        if self.layouts is not None:
            placed = self._placed(i, program, got_or_failure)
            if placed is not None:
                return Outcome(placed.verdict, placed.message, placed.reason, compared.max_error_ratio, got)
        if program.mutation is not None:
            text = (
                f"{program.mutation}: leave the inputs and their containers unchanged and build new dicts "
                "and "
                "lists for the result"
            )
            return Outcome(
                Verdict.WRONG_ANSWER, text, WrongAnswerReason.MUTATION, compared.max_error_ratio, got
            )
        if i == self.job.retrace_case:
            state = self._retrace(raw, got_or_failure, hidden, scale)
            if state is not None:
                return Outcome(state.verdict, state.message, state.reason, compared.max_error_ratio, got)
        message = (
            compared.message
            if not hidden
            else f"matches the expected output ({ratio_bucket(compared.max_error_ratio)})"
        )
        return Outcome(Verdict.ACCEPTED, message, None, compared.max_error_ratio, got)

    def _placed(self, i: int, program: ProgramReport, got: Any) -> Outcome | None:
        """The output's sharding against the reference's (``judge.core.shardings``); None when they agree."""
        expected = self.layouts[i] if self.layouts is not None else None
        if isinstance(expected, ReferenceFailure):
            return Outcome(
                Verdict.INTERNAL_ERROR, f"the judge could not compute the expected sharding: {expected}"
            )
        if not isinstance(expected, dict):
            return None
        reported = program.compiled.shardings if program.compiled is not None else None
        wrong = misplaced(
            expected, program.skeleton, reported, got, self.problem.spec.sandbox, self.checker.root_names
        )
        if wrong is None:
            return None
        if wrong.internal:
            return Outcome(Verdict.INTERNAL_ERROR, wrong.message)
        return Outcome(Verdict.WRONG_ANSWER, wrong.message, WrongAnswerReason.SHARDING)

    def _compare(
        self, expected: Any, expected_gradient: Any, got: Any, scale: Any = None
    ) -> tuple[CompareResult, Any]:
        """Compare a program's result with the expected one; the result and the user's output alone.
        ``scale``: the output's magnitudes (``judge.core.compare``), or None."""
        if self.gradients is None:
            return self.checker(expected, got, scale=scale), got
        return compare_with_gradient(self.checker, expected, expected_gradient, got, scale=scale)

    def _retrace(self, raw: RawRun, first: Any, hidden: bool, scale: Any = None) -> Outcome | None:
        """Compare the re-traced program's result with the first one, with the case's magnitudes ``scale``
        (the second trace may compile to another order of additions); None when they agree."""
        retrace = raw.retrace
        if retrace is None:
            return None
        if retrace.failure is not None:
            claimed = claim(retrace.failure, hidden, self.lines)
            return Outcome(
                claimed.verdict,
                f"tracing the function a second time failed: {claimed.message}",
                claimed.reason,
            )
        if retrace.refused is not None:
            return refused(retrace.refused, self.rules, self.job.max_output_bytes)
        run = raw.retrace_run
        if run is None or run.same_program:
            return None
        second = self._output(retrace, run, hidden)
        if isinstance(second, Outcome):
            return Outcome(second.verdict, f"the second call failed: {second.message}", second.reason)
        if self.autodiff is not None:
            parts = split_autodiff(second)
            second = parts[0] if parts is not None else second
        try:
            if self.gradients is not None and isinstance(first, tuple) and len(first) == 2:
                compared, _ = compare_with_gradient(self.checker, first[0], first[1], second, scale=scale)
            else:
                compared = self.checker(first, second, scale=scale)
        except Exception:
            compared = CompareResult(
                False, WrongAnswerReason.STRUCTURE, None, "the two results differ", float("inf")
            )
        if compared.ok:
            return None
        detail = hidden_message(compared) if hidden else compared.message
        return Outcome(Verdict.WRONG_ANSWER, f"{_STATE_ADVICE} ({detail})", WrongAnswerReason.STATE)

    def _unbatched(self, raw: RawRun, i: int, program: ProgramReport) -> str | None:
        if self.batched is None:
            return None
        return unbatched(self.batched, self.problem.spec, self.job, self.case_list, raw, i, program)

    def _unrolled(self, raw: RawRun, i: int, program: ProgramReport) -> str | None:
        if self.stepped is None:
            return None
        return unrolled(self.stepped, self.problem.spec, self.job, self.case_list, raw, i, program)

    def _over_cost(self, i: int, program: ProgramReport) -> tuple[str, MistakeMatch | None] | None:
        """The problem's cost rule (``[cost]``), broken on case i: the message and the known mistake that
        costs as much (feedback on); None when kept or absent."""
        if self.problem.spec.cost is None or program.compiled is None:
            return None
        compared = comparison(self.problem, self.case_list[i], program)
        if compared is None:
            return None
        broken = over_cost(self.problem, compared)
        if broken is None:
            return None
        return broken.message, self.feedback.cost_mistake(i, broken.figure, compared, broken.bound)

    def _output(self, program: ProgramReport, run: CaseReport, hidden: bool) -> Any:
        return read_output(
            program,
            run,
            hidden=hidden,
            memory_mb=self.limits.memory_mb,
            max_output_bytes=self.job.max_output_bytes,
        )
