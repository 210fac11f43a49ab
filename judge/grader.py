"""Grade a submission: plan the session, run it on a tracer + executor pair, judge on this side.

``grade`` does the I/O: get a pair, compute expected outputs while it may still be starting, build the plan
(``build_session``: per distinct signature the ABSTRACT inputs for the tracer, per case the concrete leaves
for the executor), run it, and stream each case's result in order as soon as it is known (``on_case``).
``interpret`` is a pure function from the raw record to verdicts, so every verdict rule is unit-testable
without a sandbox; the streaming uses the same function on the record so far.

What comes from where: values and timings of outputs from the executor (it runs no user code); rules from
the executor's summary of each program (``judge.rules``); the tracer's claims only for its own failures
(trace errors, a mutation it saw), which can only hurt the submission that lies. Hidden cases show a
verdict and a message composed here, without values: no run or compile time (a program can loop a
value-dependent number of times), no exact error ratio (``|got - expected| / tol`` with ``got = 0`` reveals
``|expected|``), only a coarse bucket; a known mistake only when every failing hidden case matches the same
one (``judge.hidden.one_hidden_mistake``); their results are streamed together once the grading is over,
and the hidden phase ends on a rung of a fixed ladder (``judge.hidden.hidden_phase_bound``), so neither
when a hidden case's result comes nor when the grading ends follows a hidden value. ``author=True``
(``judge check`` grading the author's own solutions) keeps ``error_ratio``, times and per-case mistakes,
streams as results come, and pads nothing.
"""

from __future__ import annotations

import dataclasses
import json
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from judge.compare import Checker, CompareResult, bind
from judge.compile_failure import compile_crash, size_advice
from judge.errors import JudgeError, ReferenceFailure
from judge.expected import expected_gradients, expected_layouts, expected_magnitudes, expected_outputs
from judge.feedback.cost import CostComparison, compare_cost
from judge.feedback.known_costs import CostMistakeFinder
from judge.feedback.matching import Match
from judge.feedback.program_view import marks
from judge.gradients import compare_with_gradient
from judge.hidden import hidden_message, hidden_phase_bound, one_hidden_mistake, ratio_bucket
from judge.mistakes import MistakeFinder
from judge.output_tree import assemble
from judge.printed import printed_sections
from judge.problems import Case, Problem
from judge.progress import RunProgress, progress_of
from judge.reference_cost import reference_cost
from judge.results import (
    CaseCost,
    CaseResult,
    GradeResult,
    LeafValue,
    MistakeMatch,
    ProgramMark,
    ProgramView,
    Visibility,
)
from judge.rules import (
    ProgramSummary,
    Rule,
    broken_rule,
    donated_args,
    idle_loops_message,
    precheck_for,
    remat_message,
    rules_for,
)
from judge.rules_transform import (
    Peer,
    StepPeer,
    autodiff_broken,
    autodiff_plan,
    autodiff_rule,
    autodiff_scale,
    batch_size,
    batched_broken,
    batched_rule,
    held_key,
    loop_steps,
    outside_loops,
    split_autodiff,
    unrolled_broken,
)
from judge.shardings import misplaced
from judge.spec import AutodiffRule, BatchedRule, ForbidOpsRule, LoopRule
from judge.verdicts import STOPS_RUN, Verdict, WrongAnswerReason
from sandbox.base import Pair
from sandbox.errors import Cancelled, HostOverloaded
from sandbox.limits import SandboxLimits
from sandbox.monitor import OVERLOAD_FACTOR, CasePlan, SessionJob, SigPlan, run_session
from sandbox.protocol import ADVICE, ProtocolError
from sandbox.session.reports import CaseReport, ProgramReport, RawRun, Refused, Stop, TraceFailure
from sandbox.tree import BadLeaf, OtherNode, split_input


class PairSource(Protocol):
    """Hands out a tracer and an executor for the given limits (a pool's ``acquire``, or fresh ones). The
    monitor runs hidden cases after every shown result in that executor, which serves no other grading."""

    def __call__(self, limits: SandboxLimits) -> Pair: ...


CaseCallback = Callable[[CaseResult], None]
ProgressCallback = Callable[[RunProgress], None]

MAX_CODE_BYTES = 256 * 1024
#: Verdicts the tracer may claim for its own failures; anything else from it is not trusted.
_CLAIMABLE = frozenset(
    {Verdict.TRACE_ERROR, Verdict.RUNTIME_ERROR, Verdict.MEMORY_LIMIT_EXCEEDED, Verdict.WRONG_ANSWER}
)
_LOAD_VERDICTS = frozenset({Verdict.COMPILE_ERROR, Verdict.RUNTIME_ERROR, Verdict.MEMORY_LIMIT_EXCEEDED})
_CLAIMABLE_REASONS = frozenset({WrongAnswerReason.STRUCTURE, WrongAnswerReason.TYPE})
_MEMORY_WORDS = ("bad_alloc", "Out of memory", "RESOURCE_EXHAUSTED", "MemoryError", "Cannot allocate memory")
_STATE_ADVICE = (
    "the function gave another result when called a second time (traced again through a fresh jax.jit): "
    "it must not keep state across calls (globals, caches, counters)"
)


def sandbox_limits(problem: Problem) -> SandboxLimits:
    lim = problem.spec.limits
    return SandboxLimits(
        case_time_s=lim.case_time_s,
        wall_time_s=lim.wall_time_s,
        cpu_time_s=lim.cpu_time_s,
        memory_mb=lim.memory_mb,
        output_bytes=lim.output_bytes,
        processes=lim.processes,
        devices=problem.spec.sandbox.devices,
    )


# ------------------------------------------------------------------------------------------ the plan


def build_session(
    problem: Problem, code: str, cases: Sequence[Case], secret: Sequence[bool], max_output_bytes: int
) -> SessionJob:
    """The session plan: what the tracer may see (abstract signatures, public values) and the executor gets.

    Signatures of non-secret cases get the lowest ids, so they are traced before anything secret; a
    signature shared by a public and a hidden case counts as public (the public case shows it anyway).
    """
    spec = problem.spec
    per_case: list[tuple[str, list[Any], list[np.ndarray[Any, Any]]]] = []
    donated = donated_args(problem)
    #: Per signature key, the flat input indices donated to its program (``judge.rules.UpdateInPlace``).
    donations: dict[str, tuple[int, ...]] = {}
    for case in cases:
        args: list[Any] = []
        leaves: list[np.ndarray[Any, Any]] = []
        donate: list[int] = []
        for arg, value in zip(spec.args, case.inputs, strict=True):
            if arg.kind == "number":
                if arg.traced:
                    args.append({"number": True})
                    leaves.append(np.asarray(value, np.float32))
                else:
                    args.append({"static": float(value)})
            elif arg.kind == "int":
                args.append({"static": int(value)})
            elif arg.kind == "int_tuple":
                # JSON has no tuple: the tracer rebuilds a tuple (hashable, as static_argnames needs).
                args.append({"static": [int(v) for v in value], "tuple": True})
            elif arg.kind in ("bool", "str"):
                args.append({"static": value})  # JSON true/false or a string: the tracer passes it as is
            elif arg.kind == "function":
                args.append({"function": str(value)})
            elif arg.kind == "key":
                # A typed key crosses as its uint32 data; the tracer wraps it again with the problem's impl.
                args.append({"key": {"impl": value.impl, "shape": list(value.shape)}})
                leaves.append(value.data)
            elif not arg.traced:
                raise JudgeError(f"argument {arg.name!r}: a static pytree argument cannot be graded")
            else:
                node, tree_leaves = split_input(value)
                args.append({"tree": node})
                if arg.name in donated:
                    donate.extend(range(len(leaves), len(leaves) + len(tree_leaves)))
                leaves.extend(tree_leaves)
        per_case.append((json.dumps(args, sort_keys=True), args, leaves))
        donations[per_case[-1][0]] = tuple(donate)
    ids: dict[str, int] = {}
    for public_first in (True, False):
        for (key, _, _), is_secret in zip(per_case, secret, strict=True):
            if is_secret != public_first and key not in ids:
                ids[key] = len(ids)
    sigs: dict[int, SigPlan] = {}
    plans: list[CasePlan] = []
    for index, ((key, args, leaves), is_secret, case) in enumerate(zip(per_case, secret, cases, strict=True)):
        sig_id = ids[key]
        shared_public = sigs.get(sig_id) is not None and not sigs[sig_id].secret
        if sig_id not in sigs or (not is_secret and sigs[sig_id].secret):
            sigs[sig_id] = SigPlan(
                sig_id,
                args,
                [{"dtype": x.dtype.name, "shape": list(x.shape)} for x in leaves],
                secret=is_secret and not shared_public,
                donate=donations[key],
            )
        plans.append(CasePlan(index, sig_id, leaves, is_secret, case.name))
    return SessionJob(
        code=code,
        function=spec.function,
        args=[{"name": a.name, "kind": a.kind, "traced": a.traced} for a in spec.args],
        sigs=[sigs[i] for i in sorted(sigs)],
        cases=plans,
        check_inputs_unchanged="inputs_unchanged" in spec.compare.checks,
        max_output_bytes=max_output_bytes,
        retrace_case=len(plans) - 1 if plans else None,
        precheck=precheck_for(problem),
        gradient=_gradient_plan(problem),
        autodiff=autodiff_plan(problem, sigs),
        functions=problem.menu_source,
        devices=spec.sandbox.devices,
        matmul_precision=spec.compare.matmul_precision,
    )


def _gradient_plan(problem: Problem) -> dict[str, Any] | None:
    """The tracer's instructions for a problem that checks a gradient (``sandbox.transforms``)."""
    gradient = problem.spec.gradient
    if gradient is None:
        return None
    names = [a.name for a in problem.spec.args]
    return {
        "wrt": [names.index(name) for name in gradient.wrt],
        "names": list(gradient.wrt),
        "cotangent": gradient.cotangent,
    }


# ------------------------------------------------------------------------------------------ grading


def grade(
    problem: Problem,
    code: str,
    source: PairSource,
    *,
    cases: Sequence[Case] | None = None,
    custom: Sequence[Case] = (),
    on_case: CaseCallback | None = None,
    author: bool = False,
    feedback: bool = True,
    on_progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> GradeResult:
    """Grade ``code`` on ``cases`` (default: every case of the problem) plus custom Run-panel cases.

    ``on_progress`` is called with the phase (``judge.progress``) whenever a worker answers; ``cancel``,
    once set, stops the sandbox work (the workers are replaced) and raises ``sandbox.errors.Cancelled``.

    ``on_case`` is called with each case's result, in case order, as soon as it is known (hidden cases with
    verdict and message only, exactly as in the returned result); from the first hidden case on, the results
    are held and sent together when the grading is over. ``author``: keep measurements that are
    only for a problem's author (hidden cases' error ratios and run times). ``feedback``: name known
    mistakes, show public programs and their cost (``bench/bench_feedback.py`` measures it off).
    """
    started = time.monotonic()
    base = list(problem.cases if cases is None else cases)
    chosen = [*base, *custom]
    visibility: list[Visibility] = [c.definition.visibility for c in base] + ["custom"] * len(custom)
    limits = sandbox_limits(problem)
    # May still be starting (importing JAX) while the expected outputs are read.
    pair = source(limits)
    reusable = False
    try:
        expected = expected_outputs(problem, chosen)
        gradients = expected_gradients(problem, chosen)
        job = build_session(
            problem,
            code,
            chosen,
            [v == "hidden" for v in visibility],
            max_output_bytes=limits.max_frame_bytes // 2,
        )
        judging = Judging(
            problem, chosen, visibility, expected, limits, job, author=author, gradients=gradients
        )
        judging.layouts = expected_layouts(problem, chosen)
        judging.scales = expected_magnitudes(problem, chosen)
        judging.mistakes = (
            MistakeFinder(problem, chosen, expected, gradients, judging.scales) if feedback else None
        )
        judging.cost_mistakes = CostMistakeFinder(problem, chosen) if feedback else None
        streamer = _Streamer(judging, on_case, on_progress)
        if cancel is not None and cancel.is_set():
            raise Cancelled("the grading was cancelled before it started")
        raw = run_session(pair, job, limits, progress=streamer.update, cancel=cancel)
        reusable = raw.executor_reusable
    finally:
        pair.release(reusable)
    if raw.cancelled:
        raise Cancelled("the grading was cancelled")
    if raw.stop is not None and raw.stop.timeout == "overload":
        raise HostOverloaded(
            f"the machine is too busy: the {raw.stop.party} got too little CPU to finish "
            f"{raw.stop.phase} within {OVERLOAD_FACTOR:g} times the time limit (the submission was not at "
            "fault)"
        )
    result = judging.result(raw, backend=pair.backend, elapsed_ms=(time.monotonic() - started) * 1000)
    if not author and streamer.hidden_from is not None:
        # The hidden phase (from the hidden signatures' hand-over to the verdicts, the judge's own work on
        # them included) ends on a rung of a fixed ladder, so the time anyone can observe (the held hidden
        # events, the result, elapsed_ms) does not follow the hidden values (judge.hidden.hidden_phase_bound).
        took = time.monotonic() - streamer.hidden_from
        time.sleep(max(0.0, hidden_phase_bound(took) - took))
        result = result.model_copy(update={"elapsed_ms": round((time.monotonic() - started) * 1000, 1)})
    streamer.finish(result)
    return result


class _Streamer:
    """Calls ``on_case`` for each case, in order, as soon as its result is final; from the first hidden case
    on (unless for an author), every result is held and sent together once the grading is over, so no
    hidden case's result is timed by when it comes. ``hidden_from``: when the hidden phase began (the
    tracer was handed the hidden signatures), None while it has not."""

    def __init__(
        self, judging: Judging, on_case: CaseCallback | None, on_progress: ProgressCallback | None = None
    ) -> None:
        self.judging = judging
        self.on_case = on_case
        self.on_progress = on_progress
        self.sent = 0
        self.hidden_from: float | None = None
        visibility = judging.visibility
        self.hold_at = (
            len(visibility)
            if judging.author or "hidden" not in visibility
            else list(visibility).index("hidden")
        )

    def update(self, raw: RawRun) -> None:
        if self.hidden_from is None and raw.output_cut is not None:
            self.hidden_from = time.monotonic()
        if self.on_progress is not None:
            self.on_progress(progress_of(raw, self.judging.job))
        if self.on_case is None:
            return
        for result in self.judging.cases(raw, final=False)[self.sent : self.hold_at]:
            self.on_case(result)
            self.sent += 1

    def finish(self, result: GradeResult) -> None:
        if self.on_case is None:
            return
        for case in result.cases[self.sent :]:
            self.on_case(case)
        self.sent = len(result.cases)


def interpret(
    problem: Problem,
    cases: Sequence[Case],
    visibility: Sequence[Visibility],
    expected: Sequence[Any],
    raw: RawRun,
    limits: SandboxLimits,
    job: SessionJob,
    *,
    backend: str,
    elapsed_ms: float,
    author: bool = False,
    gradients: Sequence[Any] | None = None,
) -> GradeResult:
    """Verdicts from what the tracer and the executor reported. Pure: no I/O, no JAX. ``gradients``: the
    reference's gradient per case, for a problem that checks one."""
    judging = Judging(problem, cases, visibility, expected, limits, job, author=author, gradients=gradients)
    return judging.result(raw, backend=backend, elapsed_ms=elapsed_ms)


@dataclass
class Judging:
    """Everything the verdicts depend on besides the raw record."""

    problem: Problem
    case_list: Sequence[Case]
    visibility: Sequence[Visibility]
    expected: Sequence[Any]
    limits: SandboxLimits
    job: SessionJob
    author: bool = False
    #: The reference's gradient per case (``[gradient]`` problems), else None.
    gradients: Sequence[Any] | None = None
    #: Where the reference's output leaves live, per case (``judge.shardings``): problems of more than
    #: one device only, else None.
    layouts: Sequence[Any] | None = None
    #: Per case, the magnitude of the terms of each output element (``judge.spec.CompareSpec.magnitude``;
    #: a ReferenceFailure where it failed), or None for a problem without a magnitude function.
    scales: Sequence[Any] | None = None
    #: Which known mistake a wrong output on case i looks like (``judge.mistakes``); None: not asked.
    mistakes: Callable[[int, Any], Match | None] | None = None
    #: Which known mistake a program the cost rule refuses on case i looks like, from the figure that
    #: broke it, its value and the most the rule allows (``judge.feedback.known_costs``); None: not asked.
    cost_mistakes: Callable[[int, str, float, float], Match | None] | None = None
    checker: Checker = field(init=False)
    rules: list[Rule] = field(init=False)
    #: The transformation rules (``judge.rules_transform``) the problem declares, if any.
    autodiff: AutodiffRule | None = field(init=False)
    batched: BatchedRule | None = field(init=False)
    #: The ``require_loop`` rule with a bound on steps (``LoopRule.steps``), if the problem has one.
    stepped: LoopRule | ForbidOpsRule | None = field(init=False)
    lines: list[str] = field(init=False)
    _cache: dict[int, CaseResult] = field(default_factory=dict, init=False)
    _views: dict[int, ProgramView | None] = field(default_factory=dict, init=False)

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
                    verdict, text = self._stopped(raw, stop, hidden=vis == "hidden")
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
        if (self.batched is not None or self.stepped is not None) and not self._peers_settled(raw, plan.sig):
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
        outcome = self._outcome(raw, i, program, vis)
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
                self._cost(i, program, run.run_ms if run is not None and show_run else None)
                if vis != "hidden" and self.mistakes is not None
                else None
            ),
            program=self._view(plan.sig, program) if vis != "hidden" and self.mistakes is not None else None,
        )
        return _shown(case, vis, result, outcome.got, self.expected[i])

    def _outcome(self, raw: RawRun, i: int, program: ProgramReport, vis: Visibility) -> _Outcome:
        """The verdict of one case whose outcome is known. Never raises: a crashing checker is ours."""
        hidden = vis == "hidden"
        expected = self.expected[i]
        if isinstance(expected, ReferenceFailure):
            return _Outcome(
                Verdict.INTERNAL_ERROR, f"the judge could not compute the expected output: {expected}"
            )
        expected_gradient = self.gradients[i] if self.gradients is not None else None
        if isinstance(expected_gradient, ReferenceFailure):
            return _Outcome(
                Verdict.INTERNAL_ERROR,
                f"the judge could not compute the expected gradient: {expected_gradient}",
            )
        scale = self.scales[i] if self.scales is not None else None
        if isinstance(scale, ReferenceFailure):
            return _Outcome(
                Verdict.INTERNAL_ERROR, f"the judge could not compute the output's magnitudes: {scale}"
            )
        if program.failure is not None:
            return self._claim(program.failure, hidden)
        if program.refused is not None:
            return self._refused(program.refused)
        rule = broken_rule(self.rules, ProgramSummary.from_compiled(program.compiled))
        if rule is None:
            rule = self._unbatched(raw, i, program)
        if rule is None:
            rule = self._unrolled(raw, i, program)
        if rule is not None:
            return _Outcome(Verdict.WRONG_ANSWER, rule, WrongAnswerReason.RULE)
        costly = self._over_cost(i, program)
        if costly is not None:
            text, mistake = costly
            return _Outcome(Verdict.WRONG_ANSWER, text, WrongAnswerReason.RULE, mistake=mistake)
        run = raw.runs[i]
        got_or_failure = self._output(program, run, hidden)
        if isinstance(got_or_failure, _Outcome):
            return got_or_failure
        idle = idle_loops_message(
            self.problem, _empty_leaves_matter(run.loops_matter, _leaf_sizes(expected)), _leaf_count(expected)
        )
        if idle is None:
            idle = remat_message(
                self.problem, ProgramSummary.from_compiled(program.compiled), _leaf_count(expected)
            )
        if idle is not None:
            return _Outcome(Verdict.WRONG_ANSWER, idle, WrongAnswerReason.RULE)
        again = None
        if self.autodiff is not None:
            parts = split_autodiff(got_or_failure)
            if parts is None:
                return _Outcome(
                    Verdict.WRONG_ANSWER,
                    "the program did not return its output twice (the second time with autodiff seeds "
                    "scaled)",
                    WrongAnswerReason.STRUCTURE,
                )
            got_or_failure, again = parts
        try:
            compared, got = self._compare(expected, expected_gradient, got_or_failure, scale)
        except Exception as exc:
            return _Outcome(Verdict.INTERNAL_ERROR, f"the checker failed: {type(exc).__name__}: {exc}")
        if not compared.ok:
            text = hidden_message(compared) if hidden else compared.message
            mistake = self._mistake(i, got_or_failure, compared.reason)
            return _Outcome(
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
                return _Outcome(
                    Verdict.WRONG_ANSWER, broken, WrongAnswerReason.RULE, compared.max_error_ratio, got
                )
        if self.layouts is not None:
            placed = self._placed(i, program, got_or_failure)
            if placed is not None:
                return _Outcome(placed.verdict, placed.message, placed.reason, compared.max_error_ratio, got)
        if program.mutation is not None:
            text = (
                f"{program.mutation}: leave the inputs and their containers unchanged and build new dicts "
                "and "
                "lists for the result"
            )
            return _Outcome(
                Verdict.WRONG_ANSWER, text, WrongAnswerReason.MUTATION, compared.max_error_ratio, got
            )
        if i == self.job.retrace_case:
            state = self._retrace(raw, got_or_failure, hidden, scale)
            if state is not None:
                return _Outcome(state.verdict, state.message, state.reason, compared.max_error_ratio, got)
        message = (
            compared.message
            if not hidden
            else f"matches the expected output ({ratio_bucket(compared.max_error_ratio)})"
        )
        return _Outcome(Verdict.ACCEPTED, message, None, compared.max_error_ratio, got)

    def _peers_settled(self, raw: RawRun, sig: int) -> bool:
        """Every signature before ``sig`` has its program's outcome (the ``require_batched`` rule compares
        a program with those, so a case waits for them: its verdict must not depend on timing)."""
        for other in self.job.sigs:
            if other.id >= sig:
                continue
            report = raw.programs.get(other.id)
            if report is None or (
                report.compiled is None and report.refused is None and report.failure is None
            ):
                return False
        return True

    def _unbatched(self, raw: RawRun, i: int, program: ProgramReport) -> str | None:
        """The ``require_batched`` rule on case i's program, against the programs of earlier signatures
        that hold every other size the same (``judge.rules_transform.held_key``)."""
        rule = self.batched
        if rule is None:
            return None
        plan = self.job.cases[i]
        spec = self.problem.spec
        ops = ProgramSummary.from_compiled(program.compiled).ops
        peers = []
        for other in self.job.sigs:
            report = raw.programs.get(other.id)
            first = self.job.first_case(other.id)
            if other.id >= plan.sig or report is None or report.compiled is None or first is None:
                continue
            inputs = self.case_list[first].inputs
            size, held = batch_size(rule, spec, inputs), held_key(rule, spec, inputs)
            if size is not None and held is not None:
                summary = ProgramSummary.from_wire(report.compiled.summary)
                peers.append(Peer(size, summary.ops, held, self.case_list[first].name))
        inputs = self.case_list[i].inputs
        return batched_broken(rule, batch_size(rule, spec, inputs), held_key(rule, spec, inputs), ops, peers)

    def _unrolled(self, raw: RawRun, i: int, program: ProgramReport) -> str | None:
        """The ``require_loop`` rule's bound on steps on case i's program, against the programs of earlier
        signatures (``judge.rules_transform.unrolled_broken``)."""
        rule = self.stepped
        if rule is None:
            return None
        plan = self.job.cases[i]
        spec = self.problem.spec
        summary = ProgramSummary.from_compiled(program.compiled)
        peers = []
        for other in self.job.sigs:
            report = raw.programs.get(other.id)
            first = self.job.first_case(other.id)
            if other.id >= plan.sig or report is None or report.compiled is None or first is None:
                continue
            steps = loop_steps(rule, spec, self.case_list[first].inputs)
            if steps is not None:
                theirs = ProgramSummary.from_wire(report.compiled.summary)
                peers.append(
                    StepPeer(steps, outside_loops(theirs.ops, theirs.loop_ops), self.case_list[first].name)
                )
        steps = loop_steps(rule, spec, self.case_list[i].inputs)
        return unrolled_broken(rule, steps, outside_loops(summary.ops, summary.loop_ops), peers)

    def _placed(self, i: int, program: ProgramReport, got: Any) -> _Outcome | None:
        """The output's sharding against the reference's (``judge.shardings``); None when they agree."""
        expected = self.layouts[i] if self.layouts is not None else None
        if isinstance(expected, ReferenceFailure):
            return _Outcome(
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
            return _Outcome(Verdict.INTERNAL_ERROR, wrong.message)
        return _Outcome(Verdict.WRONG_ANSWER, wrong.message, WrongAnswerReason.SHARDING)

    def _comparison(
        self, i: int, program: ProgramReport, run_ms: float | None = None
    ) -> CostComparison | None:
        """The program's cost (the executor's figures) beside the reference's on case i, or None.
        ``run_ms``: the case's run time, when it may be shown."""
        compiled = program.compiled
        if compiled is None or not compiled.cost.figures():
            return None
        reference = reference_cost(self.problem, self.case_list[i])
        if reference is None:
            return None
        loops = compiled.summary.loops
        # A program the executor had compiled before (its cache) took no compile time worth comparing.
        compile_ms = None if compiled.cached else compiled.compile_ms
        return compare_cost(compiled.cost.figures(), loops, reference, compile_ms=compile_ms, run_ms=run_ms)

    def _view(self, sig: int, program: ProgramReport) -> ProgramView | None:
        """The program view of a public signature (the tracer's text, before anything hidden reached it);
        None for a secret signature, whatever the tracer sent. One per signature."""
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

    def _cost(self, i: int, program: ProgramReport, run_ms: float | None) -> CaseCost | None:
        try:
            comparison = self._comparison(i, program, run_ms)
        except Exception:  # feedback is extra: the verdict stands without it
            return None
        return None if comparison is None else CaseCost(**dataclasses.asdict(comparison))

    def _over_cost(self, i: int, program: ProgramReport) -> tuple[str, MistakeMatch | None] | None:
        """The problem's cost rule (``[cost]``), broken on case i: the message and the known mistake that
        costs as much (feedback on); None when kept or absent. Figures the judge cannot get (no cost
        analysis) break nothing."""
        rule = self.problem.spec.cost
        if rule is None or program.compiled is None:
            return None
        comparison = self._comparison(i, program)
        if comparison is None:
            return None
        for what, figure, got, bound in (
            ("FLOPs", "flops", comparison.flops_ratio, rule.max_flops_ratio),
            ("bytes accessed", "bytes_accessed", comparison.bytes_ratio, rule.max_bytes_ratio),
        ):
            if got is not None and bound is not None and got > bound:
                text = (
                    f"the compiled program costs {got:.3g} times the reference solution's {what}; this "
                    f"problem allows at most {bound:g} times (do the work once: no repeated or wasted "
                    "computation)"
                )
                return text, self._cost_mistake(i, figure, comparison, bound)
        return None

    def _cost_mistake(
        self, i: int, figure: str, comparison: CostComparison, bound: float
    ) -> MistakeMatch | None:
        """The known mistake that breaks the cost rule on the same figure with the nearest value
        (``judge.feedback.known_costs``): a right answer that costs too much has no output to match. Only
        its name and note come out, so it is the same for a hidden case; a finder that fails names nothing."""
        if self.cost_mistakes is None:
            return None
        mine = comparison.flops if figure == "flops" else comparison.bytes_accessed
        reference = comparison.reference_flops if figure == "flops" else comparison.reference_bytes_accessed
        if mine is None or reference is None:
            return None
        try:
            match = self.cost_mistakes(i, figure, mine, bound * reference)
        except Exception:  # feedback is extra: the verdict stands without it
            return None
        if match is None:
            return None
        return MistakeMatch(name=match.mistake.name, note=match.mistake.note, others=match.others)

    def _mistake(self, i: int, got: Any, reason: WrongAnswerReason | None) -> MistakeMatch | None:
        """The known mistake a wrong output (by structure, shape, dtype or value) looks like. Only names and
        notes come out of it, so it is the same for a hidden case; a finder that fails names nothing."""
        if self.mistakes is None or reason not in _MATCHED_REASONS:
            return None
        try:
            match = self.mistakes(i, got)
        except Exception:  # feedback is extra: the verdict stands without it
            return None
        if match is None:
            return None
        return MistakeMatch(name=match.mistake.name, note=match.mistake.note, others=match.others)

    def _compare(
        self, expected: Any, expected_gradient: Any, got: Any, scale: Any = None
    ) -> tuple[CompareResult, Any]:
        """Compare a program's result with the expected one; the result and the user's output alone.
        ``scale``: the output's magnitudes (``judge.compare``), or None."""
        if self.gradients is None:
            return self.checker(expected, got, scale=scale), got
        return compare_with_gradient(self.checker, expected, expected_gradient, got, scale=scale)

    def _output(self, program: ProgramReport, run: CaseReport, hidden: bool) -> Any:
        """The host output tree of a run, or the outcome that it failed."""
        if run.error is not None:
            if run.error.kind == "memory":
                return _Outcome(
                    Verdict.MEMORY_LIMIT_EXCEEDED,
                    f"used more than the {self.limits.memory_mb} MiB memory limit",
                )
            detail = "" if hidden else f": {run.error.message}"
            return _Outcome(Verdict.RUNTIME_ERROR, f"the compiled program failed while running{detail}")
        try:
            got = assemble(program.skeleton, run.outputs or [], self.job.max_output_bytes)
        except ProtocolError as exc:
            return _Outcome(Verdict.RUNTIME_ERROR, f"the output could not be read: {exc}")
        bad = _bad_leaf(got)
        if bad is not None:
            return _Outcome(
                Verdict.WRONG_ANSWER,
                f"the function returned a {bad} where every leaf must be a JAX array",
                WrongAnswerReason.TYPE,
            )
        return got

    def _retrace(self, raw: RawRun, first: Any, hidden: bool, scale: Any = None) -> _Outcome | None:
        """Compare the re-traced program's result with the first one, with the case's magnitudes ``scale``
        (the second trace may compile to another order of additions); None when they agree."""
        retrace = raw.retrace
        if retrace is None:
            return None
        if retrace.failure is not None:
            claim = self._claim(retrace.failure, hidden)
            return _Outcome(
                claim.verdict, f"tracing the function a second time failed: {claim.message}", claim.reason
            )
        if retrace.refused is not None:
            return self._refused(retrace.refused)
        run = raw.retrace_run
        if run is None or run.same_program:
            return None
        second = self._output(retrace, run, hidden)
        if isinstance(second, _Outcome):
            return _Outcome(second.verdict, f"the second call failed: {second.message}", second.reason)
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
        return _Outcome(Verdict.WRONG_ANSWER, f"{_STATE_ADVICE} ({detail})", WrongAnswerReason.STATE)

    # -------------------------------------------------------------------------------------- claims

    def _claim(self, failure: TraceFailure, hidden: bool) -> _Outcome:
        """A failure the tracer reports for its own case: trusted only within the claimable verdicts, and
        for hidden cases shown only as data composed here (line, its own copy of the line, advice)."""
        try:
            verdict = Verdict(failure.verdict)
        except ValueError:
            verdict = Verdict.RUNTIME_ERROR
        if verdict not in _CLAIMABLE:
            verdict = Verdict.RUNTIME_ERROR
        reason = None
        if verdict is Verdict.WRONG_ANSWER:
            try:
                reason = WrongAnswerReason(str(failure.reason))
            except ValueError:
                reason = WrongAnswerReason.TYPE
            if reason not in _CLAIMABLE_REASONS:
                reason = WrongAnswerReason.TYPE
        if not hidden:
            return _Outcome(verdict, failure.message[:4000], reason)
        return _Outcome(verdict, self._composed(failure), reason)

    def _composed(self, failure: TraceFailure) -> str:
        line = failure.line
        where = ""
        if 1 <= line <= len(self.lines):
            text = self.lines[line - 1].strip()[:200]
            where = f"line {line}: `{text}`\n" if text else f"line {line}\n"
        advice = failure.advice
        if advice is not None and advice in ADVICE:
            return where + ADVICE[advice]
        error = failure.error
        name = error if error is not None and error.isidentifier() and len(error) <= 60 else "an exception"
        return f"{where}{name} was raised (details are not shown for hidden cases)"

    def _refused(self, refused: Refused) -> _Outcome:
        """The executor would not compile the program: a rule, a leaked tracer, the output cap, or junk."""
        kind = refused.kind
        message = refused.message[:500]
        if kind in ("host_callback", "custom_call", "op", "rule"):
            summary = ProgramSummary.from_wire(refused.summary)
            text = broken_rule(self.rules, summary) or f"{message}: this problem needs a pure JAX computation"
            return _Outcome(Verdict.WRONG_ANSWER, text, WrongAnswerReason.RULE)
        if kind == "extra_inputs":
            return _Outcome(Verdict.TRACE_ERROR, f"{ADVICE['leak']} ({message})")
        if kind == "output_limit":
            return _Outcome(
                Verdict.OUTPUT_LIMIT_EXCEEDED,
                f"{message}, more than the {self.job.max_output_bytes}-byte limit",
            )
        return _Outcome(Verdict.RUNTIME_ERROR, f"the program could not be compiled: {message}")

    # -------------------------------------------------------------------------------------- stops

    def _load_error(self, raw: RawRun) -> tuple[Verdict, str] | None:
        if raw.load is not None and raw.load.failed:
            try:
                verdict = Verdict(raw.load.verdict)
            except ValueError:
                verdict = Verdict.RUNTIME_ERROR
            return (verdict if verdict in _LOAD_VERDICTS else Verdict.RUNTIME_ERROR), raw.load.message
        if raw.load is None and raw.stop is not None:
            return self._stopped(raw, raw.stop)
        return None

    def _stopped(self, raw: RawRun, stop: Stop, *, hidden: bool = False) -> tuple[Verdict, str]:
        """Why the run stopped without a result for the case it is charged to (``hidden``: a hidden case,
        told without XLA's own words, which may print the program's shapes)."""
        limits = self.limits
        # A program's size is blamed only where it can be the cause (``judge.compile_failure``).
        advice = size_advice(stop.program_bytes)
        phase = {
            "load": "while loading the code",
            "trace": "while tracing the function",
            "print": "while running the function on the public cases to show its jax.debug output",
            "retrace": "while tracing the function a second time",
            "compile": "while compiling the program",
            "run": "while running the compiled program",
        }.get(stop.phase, "before returning a result for this case")
        if stop.protocol_error is not None:
            who = "the process that runs your code" if stop.party == "tracer" else "the program's execution"
            return Verdict.RUNTIME_ERROR, (
                f"{who} sent malformed data on the judge's result channel "
                f"({stop.protocol_error[:300]}) {phase}"
            )
        if stop.timeout == "wall":
            return (
                Verdict.TIME_LIMIT_EXCEEDED,
                f"the submission used up its total time limit of {limits.wall_time_s:g} s",
            )
        if stop.timeout == "case":
            if stop.phase == "load":
                return Verdict.TIME_LIMIT_EXCEEDED, (
                    f"loading the code took longer than the {limits.case_time_s:g} s limit; no case was run"
                )
            if stop.phase == "compile":
                return Verdict.TIME_LIMIT_EXCEEDED, (
                    f"compiling the program, not running it, took longer than the {limits.case_time_s:g} s "
                    "limit for one case (with every compiler setting the judge tries); the remaining cases "
                    f"were not run.{advice}"
                )
            return Verdict.TIME_LIMIT_EXCEEDED, (
                f"took longer than the {limits.case_time_s:g} s limit for one case {phase}; "
                "the remaining cases "
                "were not run"
            )
        rc = stop.returncode
        sig = _signal_of(rc)
        if stop.oom_killed or (
            sig is not None and any(w in raw.output.decode(errors="replace") for w in _MEMORY_WORDS)
        ):
            return (
                Verdict.MEMORY_LIMIT_EXCEEDED,
                f"used more than the {limits.memory_mb} MiB memory limit {phase}",
            )
        if stop.party == "executor" and sig == signal.SIGKILL:
            # An executor's CPU limit is its soft RLIMIT_CPU (SIGXCPU); its hard one is a lifetime far above
            # any job's. A SIGKILL the judge did not send came from outside: the judge's failure.
            return Verdict.INTERNAL_ERROR, (
                f"the process that runs the compiled program was killed from outside the judge {phase}; "
                "this is not a fault of your code (submit again)"
            )
        if sig in (signal.SIGXCPU, signal.SIGKILL):
            # Our own kills are reported as timeouts above; the kernel sends SIGXCPU at the CPU rlimit and
            # SIGKILL at its hard limit.
            return (
                Verdict.TIME_LIMIT_EXCEEDED,
                f"used more than the {limits.cpu_time_s:g} s CPU time limit {phase}",
            )
        if stop.party == "executor" and stop.phase == "compile":
            if any(w in note for note in stop.notes for w in _MEMORY_WORDS):
                return Verdict.MEMORY_LIMIT_EXCEEDED, (
                    f"compiling the program, not running it, used more than the {limits.memory_mb} MiB "
                    f"memory limit.{advice}"
                )
            what = f"signal {sig.name}" if sig is not None else f"exit code {rc}"
            return Verdict.RUNTIME_ERROR, compile_crash(stop.notes, what, stop.program_bytes, hidden=hidden)
        if stop.party == "executor":
            what = f"signal {sig.name}" if sig is not None else f"exit code {rc}"
            return Verdict.RUNTIME_ERROR, f"the compiled program crashed ({what}) {phase}"
        if sig is not None:
            return Verdict.RUNTIME_ERROR, f"the process was killed by signal {sig.name} {phase}"
        return Verdict.RUNTIME_ERROR, (
            f"the process exited (code {rc}) {phase}; do not call sys.exit(), os._exit() or exit the "
            "interpreter"
        )


@dataclass(frozen=True)
class _Outcome:
    verdict: Verdict
    message: str
    reason: WrongAnswerReason | None = None
    error_ratio: float | None = None
    got: Any = None
    mistake: MistakeMatch | None = None


#: The wrong answers whose output a known mistake's can match (a rule, a mutation or kept state is about
#: the program, not its output).
_MATCHED_REASONS = frozenset(
    {
        WrongAnswerReason.STRUCTURE,
        WrongAnswerReason.TYPE,
        WrongAnswerReason.SHAPE,
        WrongAnswerReason.DTYPE,
        WrongAnswerReason.VALUE,
    }
)


# ------------------------------------------------------------------------------------------ outputs


def _leaf_count(tree: Any) -> int:
    """The array leaves of a decoded tree (an expected output), in flatten order as the program's outputs."""
    if isinstance(tree, dict):
        return sum(_leaf_count(v) for v in tree.values())
    if isinstance(tree, list | tuple):
        return sum(_leaf_count(v) for v in tree)
    if isinstance(tree, OtherNode):
        return sum(_leaf_count(v) for v in tree.children)
    return 0 if tree is None else 1


def _leaf_sizes(tree: Any) -> list[int]:
    """The element count of each array leaf of a decoded tree, in the order of ``_leaf_count``."""
    if isinstance(tree, dict):
        return [n for v in tree.values() for n in _leaf_sizes(v)]
    if isinstance(tree, list | tuple):
        return [n for v in tree for n in _leaf_sizes(v)]
    if isinstance(tree, OtherNode):
        return [n for v in tree.children for n in _leaf_sizes(v)]
    return [] if tree is None else [int(np.size(tree))]


def _empty_leaves_matter(loops_matter: Sequence[bool] | None, sizes: Sequence[int]) -> list[bool] | None:
    """The loop check's verdict per output leaf, every leaf counted as mattering when the whole output is
    empty: an empty output has no bit a perturbed loop could change (a loop over an empty array), so it
    cannot show that the loop is idle. With one non-empty leaf, the non-empty leaves decide."""
    if loops_matter is None:
        return None
    if all(size == 0 for size in sizes):
        return [True] * len(loops_matter)
    return list(loops_matter)


def _bad_leaf(tree: Any) -> str | None:
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, BadLeaf):
            return node.type_name
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
        elif isinstance(node, OtherNode):
            stack.extend(node.children)
    return None


# ------------------------------------------------------------------------------------------ helpers


def _first_failure(cases: Sequence[CaseResult]) -> Verdict:
    for case in cases:
        if case.verdict not in (Verdict.ACCEPTED, Verdict.NOT_RUN):
            return case.verdict
    return Verdict.ACCEPTED


def _signal_of(rc: int | None) -> signal.Signals | None:
    """The signal that ended a process: negative return codes, or 128+N from a wrapper such as bwrap."""
    if rc is None or rc == 0:
        return None
    number = -rc if rc < 0 else rc - 128 if rc > 128 else 0
    try:
        return signal.Signals(number)
    except ValueError:
        return None


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
