"""Grade a submission: send the case INPUTS to a sandboxed worker, compare what comes back on this side.

``grade`` does the I/O (start a worker, compute expected outputs while it boots, run the job);
``interpret`` is a pure function from the raw run to verdicts, so every verdict rule is unit-testable
without a sandbox.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from judge.compare import Checker, bind
from judge.errors import ReferenceFailure
from judge.expected import expected_outputs
from judge.problems import Case, Problem
from judge.pytree_json import format_value, pytree_to_json
from judge.results import CaseResult, GradeResult, LeafValue, Visibility
from judge.verdicts import STOPS_RUN, Verdict, WrongAnswerReason
from sandbox.base import Worker
from sandbox.limits import SandboxLimits
from sandbox.monitor import RawRun, run_job
from sandbox.protocol import ProtocolError, decode_tree, encode_tree

#: Starts (or hands out) a ready-to-be-ready worker for the given limits.
WorkerSource = Callable[[SandboxLimits], Worker]

MAX_CODE_BYTES = 256 * 1024
#: Verdicts the harness may report for a case; anything else from the channel is not trusted.
_HARNESS_VERDICTS = frozenset(
    {
        Verdict.TRACE_ERROR,
        Verdict.RUNTIME_ERROR,
        Verdict.MEMORY_LIMIT_EXCEEDED,
        Verdict.OUTPUT_LIMIT_EXCEEDED,
        Verdict.WRONG_ANSWER,
    }
)
_LOAD_VERDICTS = frozenset({Verdict.COMPILE_ERROR, Verdict.RUNTIME_ERROR, Verdict.MEMORY_LIMIT_EXCEEDED})
_MEMORY_WORDS = ("bad_alloc", "Out of memory", "RESOURCE_EXHAUSTED", "MemoryError", "Cannot allocate memory")


def sandbox_limits(problem: Problem) -> SandboxLimits:
    lim = problem.spec.limits
    return SandboxLimits(
        case_time_s=lim.case_time_s,
        wall_time_s=lim.wall_time_s,
        cpu_time_s=lim.cpu_time_s,
        memory_mb=lim.memory_mb,
        output_bytes=lim.output_bytes,
        processes=lim.processes,
    )


def build_job(problem: Problem, code: str, cases: Sequence[Case], max_output_bytes: int) -> dict[str, Any]:
    """The job the sandbox receives: code, function, argument specs and case INPUTS, nothing secret."""
    spec = problem.spec
    return {
        "type": "job",
        "code": code,
        "function": spec.function,
        "args": [{"name": a.name, "kind": a.kind, "traced": a.traced} for a in spec.args],
        "cases": [
            {"args": [{"number": v} if isinstance(v, float) else encode_tree(v) for v in case.inputs]}
            for case in cases
        ],
        "check_inputs_unchanged": "inputs_unchanged" in spec.compare.checks,
        "forbid_host_callbacks": spec.compare.forbid_host_callbacks,
        "max_output_bytes": max_output_bytes,
    }


def grade(
    problem: Problem,
    code: str,
    source: WorkerSource,
    *,
    cases: Sequence[Case] | None = None,
    custom: Sequence[Case] = (),
) -> GradeResult:
    """Grade ``code`` on ``cases`` (default: every case of the problem) plus custom Run-panel cases."""
    started = time.monotonic()
    base = list(problem.cases if cases is None else cases)
    chosen = [*base, *custom]
    visibility: list[Visibility] = [c.definition.visibility for c in base] + ["custom"] * len(custom)
    limits = sandbox_limits(problem)
    worker = source(limits)  # boots (imports JAX) while the expected outputs are read or computed
    try:
        expected = expected_outputs(problem, chosen)
        job = build_job(problem, code, chosen, max_output_bytes=limits.max_frame_bytes // 2)
        raw = run_job(worker, job, limits)
    finally:
        worker.close()
    elapsed_ms = (time.monotonic() - started) * 1000
    return interpret(
        problem, chosen, visibility, expected, raw, limits, backend=worker.backend, elapsed_ms=elapsed_ms
    )


@dataclass
class _Context:
    problem: Problem
    checker: Checker
    limits: SandboxLimits
    raw: RawRun


@dataclass
class _Reported:
    """What the harness said, sorted out: how loading went and each case's result message."""

    load_error: tuple[Verdict, str] | None = None
    loaded: bool = False
    results: dict[int, dict[str, Any]] = field(default_factory=dict)


def _reported(raw: RawRun, n_cases: int) -> _Reported:
    out = _Reported()
    for message in raw.messages:
        kind = message.get("type")
        if kind == "load_error" and out.load_error is None:
            out.load_error = _load_error(message)
        elif kind == "loaded":
            out.loaded = True
        elif kind == "case_result":
            index = message.get("index")
            if isinstance(index, int) and 0 <= index < n_cases and index not in out.results:
                out.results[index] = message
    return out


def interpret(
    problem: Problem,
    cases: Sequence[Case],
    visibility: Sequence[Visibility],
    expected: Sequence[Any],
    raw: RawRun,
    limits: SandboxLimits,
    *,
    backend: str,
    elapsed_ms: float,
) -> GradeResult:
    """Verdicts from what the worker reported. Pure: no I/O, no JAX."""
    ctx = _Context(problem, bind(problem.spec.compare, problem.spec.output), limits, raw)
    reported = _reported(raw, len(cases))
    load_error = reported.load_error
    if load_error is None and not reported.loaded:
        load_error = _stopped(ctx, before_load=True)
    stopped = load_error is not None
    culprit = _culprit(raw, reported, len(cases))
    case_results: list[CaseResult] = []
    for i, case in enumerate(cases):
        vis = visibility[i]
        message = reported.results.get(i)
        if stopped or (message is None and i != culprit):
            result = _not_run(case, vis)
        elif message is None:  # the run ended inside this case: a limit, a crash or an early exit
            verdict, text = _stopped(ctx, before_load=False)
            result = _shown(
                case, vis, CaseResult(name=case.name, visibility=vis, verdict=verdict, message=text)
            )
            stopped = True
        else:
            result = _case(ctx, case, vis, expected[i], message)
            stopped = result.verdict in STOPS_RUN
        case_results.append(result)

    verdict = load_error[0] if load_error else _first_failure(case_results)
    summary = load_error[1] if load_error else ""
    failing = next((c for c in case_results if c.verdict == verdict), None)
    if not summary and failing is not None and verdict is not Verdict.ACCEPTED:
        summary = f"case {failing.name}: {failing.message}"
    stdout, truncated = _visible_output(raw, visibility)
    return GradeResult(
        problem=problem.slug,
        verdict=verdict,
        passed=sum(c.verdict is Verdict.ACCEPTED for c in case_results),
        total=len(cases),
        message=summary,
        cases=case_results,
        stdout=stdout,
        stdout_truncated=truncated,
        backend=backend,
        elapsed_ms=round(elapsed_ms, 1),
    )


def _culprit(raw: RawRun, reported: _Reported, n_cases: int) -> int | None:
    """The case a stop is charged to: the one whose user code was being traced ahead when the process
    died (an exit, a crash, a memory kill), else the first case without a result (timeouts included:
    the clock runs on the case being reported)."""
    tracing = raw.tracing_case
    if (
        raw.timeout is None
        and tracing is not None
        and 0 <= tracing < n_cases
        and tracing not in reported.results
    ):
        return tracing
    return next((i for i in range(n_cases) if i not in reported.results), None)


def _first_failure(cases: Sequence[CaseResult]) -> Verdict:
    for case in cases:
        if case.verdict not in (Verdict.ACCEPTED, Verdict.NOT_RUN):
            return case.verdict
    return Verdict.ACCEPTED


def _claimed(message: dict[str, Any], allowed: frozenset[Verdict]) -> tuple[Verdict, str]:
    """The verdict and message the harness reports, trusted only within ``allowed`` (else runtime_error)."""
    try:
        verdict = Verdict(str(message.get("verdict")))
    except ValueError:
        verdict = Verdict.RUNTIME_ERROR
    return (verdict if verdict in allowed else Verdict.RUNTIME_ERROR), str(message.get("message", ""))[:4000]


def _load_error(message: dict[str, Any]) -> tuple[Verdict, str]:
    return _claimed(message, _LOAD_VERDICTS)


def _stopped(ctx: _Context, *, before_load: bool) -> tuple[Verdict, str]:
    """Why the worker stopped without a result (a limit, a crash, an early exit)."""
    raw, limits = ctx.raw, ctx.limits
    phase = "while loading the code" if before_load else "before returning a result for this case"
    if raw.timeout == "case" and before_load:
        return Verdict.TIME_LIMIT_EXCEEDED, (
            f"loading the code took longer than the {limits.case_time_s:g} s limit; no case was run"
        )
    if raw.timeout == "case":
        return Verdict.TIME_LIMIT_EXCEEDED, (
            f"took longer than the {limits.case_time_s:g} s limit for one case (tracing and compiling "
            "included); the remaining cases were not run"
        )
    if raw.timeout == "wall":
        return (
            Verdict.TIME_LIMIT_EXCEEDED,
            f"the submission used up its total time limit of {limits.wall_time_s:g} s",
        )
    rc = raw.returncode
    output = raw.output.decode(errors="replace")
    if raw.oom_killed or (_signal_of(rc) is not None and any(w in output for w in _MEMORY_WORDS)):
        return (
            Verdict.MEMORY_LIMIT_EXCEEDED,
            f"used more than the {limits.memory_mb} MiB memory limit {phase}",
        )
    sig = _signal_of(rc)
    if sig in (signal.SIGXCPU, signal.SIGKILL):
        # Our own kills are reported as timeouts above; the kernel sends SIGXCPU at the CPU rlimit
        # and SIGKILL at its hard limit.
        return (
            Verdict.TIME_LIMIT_EXCEEDED,
            f"used more than the {limits.cpu_time_s:g} s CPU time limit {phase}",
        )
    if raw.protocol_error:
        return Verdict.RUNTIME_ERROR, (
            f"the process sent malformed data on the judge's result channel ({raw.protocol_error}) {phase}"
        )
    if sig is not None:
        return Verdict.RUNTIME_ERROR, f"the process was killed by signal {sig.name} {phase}"
    return Verdict.RUNTIME_ERROR, (
        f"the process exited (code {rc}) {phase}; do not call sys.exit(), os._exit() or exit the interpreter"
    )


def _signal_of(rc: int | None) -> signal.Signals | None:
    """The signal that ended the worker: negative return codes, or 128+N from a wrapper such as bwrap."""
    if rc is None or rc == 0:
        return None
    number = -rc if rc < 0 else rc - 128 if rc > 128 else 0
    try:
        return signal.Signals(number)
    except ValueError:
        return None


def _not_run(case: Case, vis: Visibility) -> CaseResult:
    return CaseResult(name=case.name, visibility=vis, verdict=Verdict.NOT_RUN, message="not run")


def _value(tree: Any) -> LeafValue:
    return LeafValue(json_value=pytree_to_json(tree), text=format_value(tree))


@dataclass(frozen=True)
class _Outcome:
    verdict: Verdict
    message: str
    reason: WrongAnswerReason | None = None
    error_ratio: float | None = None
    got: Any = None


def _outcome(ctx: _Context, vis: Visibility, expected: Any, message: dict[str, Any]) -> _Outcome:
    """The verdict of one reported case. Never raises: a crashing checker is the judge's fault."""
    if isinstance(expected, ReferenceFailure):
        return _Outcome(
            Verdict.INTERNAL_ERROR, f"the judge could not compute the expected output: {expected}"
        )
    if message.get("status") == "error":
        verdict, text = _claimed(message, _HARNESS_VERDICTS)
        return _Outcome(verdict, text, WrongAnswerReason.TYPE if verdict is Verdict.WRONG_ANSWER else None)
    try:
        got = decode_tree(message.get("output"))
    except ProtocolError as exc:
        return _Outcome(Verdict.RUNTIME_ERROR, f"the output could not be decoded: {exc}")
    try:
        compared = ctx.checker(expected, got, reveal=vis != "hidden")
    except Exception as exc:
        return _Outcome(Verdict.INTERNAL_ERROR, f"the checker failed: {type(exc).__name__}: {exc}")
    if not compared.ok:
        return _Outcome(
            Verdict.WRONG_ANSWER, compared.message, compared.reason, compared.max_error_ratio, got
        )
    mutation = message.get("mutation")
    if isinstance(mutation, str):
        text = (
            f"{mutation[:500]}: leave the inputs and their containers unchanged and build new dicts and "
            "lists for the result"
        )
        return _Outcome(Verdict.WRONG_ANSWER, text, WrongAnswerReason.MUTATION, compared.max_error_ratio, got)
    return _Outcome(Verdict.ACCEPTED, compared.message, None, compared.max_error_ratio, got)


def _case(ctx: _Context, case: Case, vis: Visibility, expected: Any, message: dict[str, Any]) -> CaseResult:
    outcome = _outcome(ctx, vis, expected, message)
    result = CaseResult(
        name=case.name,
        visibility=vis,
        verdict=outcome.verdict,
        reason=outcome.reason,
        message=outcome.message,
        compile_ms=_number(message.get("compile_ms")),
        run_ms=_number(message.get("run_ms")),
        error_ratio=outcome.error_ratio,
    )
    return _shown(case, vis, result, outcome.got, expected)


def _shown(
    case: Case, vis: Visibility, result: CaseResult, output: Any = None, expected: Any = None
) -> CaseResult:
    """Attach input, output and expected values for public and custom cases; hidden ones show none."""
    if vis == "hidden":
        return result
    update: dict[str, Any] = {"input": dict(case.definition.args)}
    if output is not None:
        update["output"] = _value(output)
    if expected is not None and not isinstance(expected, ReferenceFailure):
        update["expected"] = _value(expected)
    return result.model_copy(update=update)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _visible_output(raw: RawRun, visibility: Sequence[Visibility]) -> tuple[str, bool]:
    """Captured output up to the first hidden case: hidden inputs must not leak through prints."""
    cut = len(raw.output)
    truncated = raw.output_truncated
    for i, vis in enumerate(visibility):
        if vis == "hidden" and i in raw.output_marks:
            if raw.output_marks[i] < cut:
                cut = raw.output_marks[i]
            break
    text = raw.output[:cut].decode(errors="replace")
    if cut < len(raw.output) or (truncated and cut < raw.output_total):
        withheld = cut < len(raw.output) and any(v == "hidden" for v in visibility)
        notice = "output of hidden cases is not shown" if withheld else "output was cut at the limit"
        text += f"\n[... {notice} ...]"
        truncated = True
    return text, truncated
