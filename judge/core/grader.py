"""Grade a submission: plan the session, run it on a tracer + executor pair, judge on this side.

``grade`` does the I/O: get a pair, compute expected outputs while it may still be starting, build the plan
(``build_session``: per distinct signature the ABSTRACT inputs for the tracer, per case the concrete leaves
for the executor), run it, and stream each case's result in order as soon as it is known (``on_case``).
``interpret`` is a pure function from the raw record to verdicts, so every verdict rule is unit-testable
without a sandbox; the streaming uses the same function on the record so far. The judging itself lives in
``judge.grading``: pure verdict rules (``judge.grading.verdict_rules``) and the feedback step injected into
them (``judge.grading.feedback_step``: known mistakes, costs, program views), off for ``interpret``.

What comes from where: values and timings of outputs from the executor (it runs no user code); rules from
the executor's summary of each program (``judge.grading.compiled_rules``); the tracer's claims only for its
own failures (trace errors, a mutation it saw), which can only hurt the submission that lies. Hidden cases
show a verdict and a message composed by the judge, without values: no run or compile time (a program can loop
a value-dependent number of times), no exact error ratio (``|got - expected| / tol`` with ``got = 0`` reveals
``|expected|``), only a coarse bucket; a known mistake only when every failing hidden case matches the same
one (``judge.core.hidden.one_hidden_mistake``); their results are streamed together once the grading is over,
and the hidden phase ends on a rung of a fixed ladder (``judge.core.hidden.hidden_phase_bound``), so neither
when a hidden case's result comes nor when the grading ends follows a hidden value. ``author=True``
(``judge check`` grading the author's own solutions) keeps ``error_ratio``, times and per-case mistakes,
streams as results come, and pads nothing.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from judge.core.expected import expected_gradients, expected_layouts, expected_magnitudes, expected_outputs
from judge.core.hidden import hidden_phase_bound
from judge.core.problems import Case, Problem
from judge.core.progress import RunProgress, progress_of
from judge.core.results import CaseResult, GradeResult, Visibility
from judge.feedback.known_costs import CostMistakeFinder
from judge.feedback.mistakes import MistakeFinder
from judge.grading.compiled_rules import donated_args, precheck_for
from judge.grading.feedback_step import NO_FEEDBACK, FeedbackStep
from judge.grading.judging import Judging
from judge.grading.transform_rules import autodiff_plan
from judge.kinds.registry import kind_of
from sandbox.backends.base import GradingProcesses
from sandbox.errors import Cancelled, HostOverloaded
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.driver import run_session
from sandbox.session.monitor import OVERLOAD_FACTOR, CasePlan, SessionJob, SigPlan
from sandbox.session.reports import RawRun


class ProcessesSource(Protocol):
    """Hands out a tracer and an executor for the given limits (a pool's ``acquire``, or fresh ones). The
    monitor runs hidden cases after every shown result in that executor, which serves no other grading."""

    def __call__(self, limits: SandboxLimits) -> GradingProcesses: ...


CaseCallback = Callable[[CaseResult], None]
ProgressCallback = Callable[[RunProgress], None]

MAX_CODE_BYTES = 256 * 1024


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
    #: Per signature key, the flat input indices donated to its program
    #: (``judge.grading.compiled_rules.UpdateInPlace``).
    donations: dict[str, tuple[int, ...]] = {}
    for case in cases:
        key, args, leaves, donate = _case_wire(problem, case)
        per_case.append((key, args, leaves))
        donations[key] = donate
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


def _case_wire(
    problem: Problem, case: Case
) -> tuple[str, list[Any], list[np.ndarray[Any, Any]], tuple[int, ...]]:
    """A case as the session sends it: its signature key, its arguments' wire form, its input leaves and
    the flat indices of the donated ones (``donated_args``). Memoized on the case for this problem's spec
    (everything it depends on, the donated arguments included, comes from the spec; converting every case's
    trees again cost ~3 ms of each Submit's set-up on sgd-momentum, measured); the leaves are made
    read-only, as every grading of the problem shares them."""
    spec = problem.spec
    memo = case.__dict__.get("_wire")
    if memo is not None and memo[0] is spec:
        return memo[1]  # type: ignore[no-any-return]
    donated = donated_args(problem)
    args: list[Any] = []
    leaves: list[np.ndarray[Any, Any]] = []
    donate: list[int] = []
    for arg, value in zip(spec.args, case.inputs, strict=True):
        wire, arg_leaves = kind_of(arg.kind).wire(arg, value)
        args.append(wire)
        if arg.name in donated:
            donate.extend(range(len(leaves), len(leaves) + len(arg_leaves)))
        leaves.extend(arg_leaves)
    for leaf in leaves:
        leaf.flags.writeable = False
    made = (json.dumps(args, sort_keys=True), args, leaves, tuple(donate))
    # A frozen dataclass: its __dict__ is written directly (as ``expected.case_key``'s memo is). The spec is
    # kept with it, so its identity cannot be reused by another problem's spec while the memo lives.
    case.__dict__["_wire"] = (spec, made)
    return made


def _gradient_plan(problem: Problem) -> dict[str, Any] | None:
    """The tracer's instructions for a problem that checks a gradient (``sandbox.shared.transforms``)."""
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
    source: ProcessesSource,
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

    ``on_progress`` is called with the phase (``judge.core.progress``) whenever a worker answers; ``cancel``,
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
        layouts = expected_layouts(problem, chosen)
        scales = expected_magnitudes(problem, chosen)
        judging = Judging(
            problem,
            chosen,
            visibility,
            expected,
            limits,
            job,
            author=author,
            gradients=gradients,
            layouts=layouts,
            scales=scales,
            feedback=(
                FeedbackStep(
                    problem,
                    chosen,
                    job,
                    mistakes=MistakeFinder(problem, chosen, expected, gradients, scales),
                    cost_mistakes=CostMistakeFinder(problem, chosen),
                )
                if feedback
                else NO_FEEDBACK
            ),
        )
        streamer = _Streamer(judging, on_case, on_progress)
        if cancel is not None and cancel.is_set():
            raise Cancelled("the grading was cancelled before it started")
        raw = run_session(pair, job, limits, progress=streamer.update, cancel=cancel)
        reusable = raw.executor_reusable
        # The verdicts are worked out before the processes go back: closing them and starting their
        # replacements (tens of milliseconds of CPU) then overlap the hidden phase's pad or the next
        # request, not this grading's last step.
        stop = raw.stop if raw.stop is not None and raw.stop.timeout == "overload" else None
        if not raw.cancelled and stop is None:
            result = judging.result(raw, backend=pair.backend, elapsed_ms=(time.monotonic() - started) * 1000)
    finally:
        pair.release(reusable)
    if raw.cancelled:
        raise Cancelled("the grading was cancelled")
    if stop is not None:
        raise HostOverloaded(
            f"the machine is too busy: the {stop.party} got too little CPU to finish "
            f"{stop.phase} within {OVERLOAD_FACTOR:g} times the time limit (the submission was not at fault)"
        )
    if not author and streamer.hidden_from is not None:
        # The hidden phase (from the hidden signatures' hand-over to the verdicts, the judge's own work on
        # them included) ends on a rung of a fixed ladder, so the time anyone can observe (the held hidden
        # events, the result, elapsed_ms) does not follow the hidden values
        # (judge.core.hidden.hidden_phase_bound).
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
