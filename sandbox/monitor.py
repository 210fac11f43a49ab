"""A session's plan and record, and the bounds on what its processes say.

The plan (``SessionJob``: signatures, cases, rules) is what the judge asks for; the record (``RawRun``: each
program's and case's report, and why the run stopped, ``Stop``) is everything the tracer and the executor
said and did, before any interpretation (verdicts are the judge's job, ``judge.grader.interpret``). The
functions at the end bound what a process said (texts, numbers, summaries, layouts) before it goes into the
record. The session that fills the record is driven by ``sandbox.session.driver.run_session``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

#: ``case``/``wall``: the submission used its time; ``overload``: the machine kept it waiting so long that
#: the judge gave up (its own failure, never the learner's verdict).
TimeoutKind = Literal["case", "wall", "overload"]
Party = Literal["tracer", "executor"]

#: Largest message or claim text kept from the tracer.
MAX_TEXT = 4000
#: Time limits count charged time (``sandbox.schedclock``: wall time minus the time the machine kept the
#: worker waiting on a run queue), so load changes how long an answer takes, never what it is. A request (or
#: the whole job) still short of its limit in charged time after this many times the limit in wall time is
#: stopped as the judge's own failure (``overload``): every wait has a deadline.
OVERLOAD_FACTOR = 30.0


# ------------------------------------------------------------------------------------------ the plan


@dataclass(frozen=True)
class SigPlan:
    """One distinct signature: its abstract arguments (what the tracer sees) and its flat input types."""

    id: int
    args: list[Any]
    inputs: list[dict[str, Any]]
    secret: bool
    #: Flat input indices the executor donates to the program (a problem's in-place rule), usually none.
    donate: tuple[int, ...] = ()


@dataclass(frozen=True)
class CasePlan:
    index: int
    sig: int
    #: The concrete flat inputs (signature order); only the executor receives them for secret cases.
    leaves: list[np.ndarray[Any, Any]]
    secret: bool
    name: str = ""


@dataclass(frozen=True)
class SessionJob:
    code: str
    function: str
    #: ``[{"name", "kind", "traced"}]`` in signature order.
    args: list[dict[str, Any]]
    #: Distinct signatures: every public one before any secret one.
    sigs: list[SigPlan]
    #: Cases in order.
    cases: list[CasePlan]
    check_inputs_unchanged: bool = False
    max_output_bytes: int = 16 * 1024 * 1024
    #: The case whose signature is traced a second time at the end (None: no re-trace).
    retrace_case: int | None = None
    #: Op rules the executor applies before compiling (``{"require_loop_any": [...], "forbid_ops": [...]}``):
    #: a program that breaks one is refused (kind ``rule``) without paying for its compile, so the verdict
    #: does not depend on how long an unrolled program takes to compile. The judge still decides the rule
    #: itself from the summary (``judge.rules``).
    precheck: dict[str, list[str]] = field(default_factory=dict)
    #: A gradient the program returns beside the output (``sandbox.transforms``):
    #: ``{"wrt": [arg index], "names": [arg name], "cotangent": kind}``, or None.
    gradient: dict[str, Any] | None = None
    #: ``{"sigs": {id: {"scale": factor, "scaled_first": bool}}}``: each signature's program returns the
    #: output and the output again with every autodiff seed scaled (``sandbox.inside.autodiff``, the
    #: ``require_autodiff`` rule), or None.
    autodiff: dict[str, Any] | None = None
    #: The source of the problem's menu module (problem code) for ``function`` arguments, or None.
    functions: str | None = None
    #: CPU host devices the programs are lowered for (the executor's own count is fixed at its start).
    devices: int = 1
    #: The matrix-product precision the programs are traced at (a problem's ``[compare] matmul_precision``;
    #: None: JAX's default).
    matmul_precision: str | None = None

    def sig(self, sig_id: int) -> SigPlan:
        return next(s for s in self.sigs if s.id == sig_id)

    def first_case(self, sig_id: int) -> int | None:
        return next((c.index for c in self.cases if c.sig == sig_id), None)


# ------------------------------------------------------------------------------------------ the record


@dataclass
class ProgramReport:
    """What happened to one signature's program: the tracer's part, then the executor's."""

    sig: int
    skeleton: Any = None
    debug: bool = False
    #: The trace made two or more jax.debug calls, one of them unordered (XLA may run them in any order):
    #: the tracer's claim, for a note beside the printed output only.
    debug_unordered: bool = False
    mutation: str | None = None
    trace_ms: float | None = None
    #: A public signature's program as text, {jaxpr, stablehlo} (the tracer's claim, for display only).
    view: dict[str, str] | None = None
    #: ``trace_failed`` (or ``retrace_failed``): the tracer's own claim, {verdict, message, reason}.
    failure: dict[str, Any] | None = None
    #: The executor's ``compiled`` reply: {summary, compile_ms, cached, key}.
    compiled: dict[str, Any] | None = None
    #: The executor's ``refused`` reply: {kind, message, summary}.
    refused: dict[str, Any] | None = None


@dataclass
class CaseReport:
    index: int
    outputs: list[np.ndarray[Any, Any]] | None = None
    run_ms: float | None = None
    #: The executor's ``run_error``: {kind: memory|runtime, message}.
    error: dict[str, Any] | None = None
    #: For the re-trace: the very same program (the same bytes as the first trace's, or the same text by
    #: the executor's compile), so it was not run again.
    same_program: bool = False
    #: The loop check (``sandbox.inside.perturb``): per output leaf, whether perturbing the loops' results
    #: changed it; None when the executor did not check (no ``loops_matter`` in the precheck).
    loops_matter: list[bool] | None = None


@dataclass
class Stop:
    """Why the run ended early, and which case it is charged to (None: while loading the code)."""

    party: Party
    phase: str
    case: int | None = None
    timeout: TimeoutKind | None = None
    protocol_error: str | None = None
    returncode: int | None = None
    oom_killed: bool = False
    notes: list[str] = field(default_factory=list)
    #: For an executor stopped while compiling: the size of the program it was compiling (MLIR bytecode of
    #: the StableHLO module), so the judge blames a program's size only when it is large; None otherwise.
    program_bytes: int | None = None


@dataclass
class RawRun:
    """Everything the two processes said and did, before any interpretation."""

    #: The tracer's ``loaded`` or ``load_error`` message (None: it never got that far).
    load: dict[str, Any] | None = None
    programs: dict[int, ProgramReport] = field(default_factory=dict)
    runs: dict[int, CaseReport] = field(default_factory=dict)
    retrace: ProgramReport | None = None
    retrace_run: CaseReport | None = None
    stop: Stop | None = None
    output: bytes = b""
    output_total: int = 0
    #: Bytes of output captured before the tracer was given anything hidden (None: nothing hidden).
    output_cut: int | None = None
    #: Where the public output ends in the whole stream (``output_cut`` counts kept bytes only).
    output_cut_stream: int | None = None
    #: The tracer's section marks (``sandbox.output_mark.SectionSplitter``): (stream offset, label), in
    #: order; the output from one offset to the next was printed while that label ran. Stream offsets count
    #: every byte printed (not only those kept); ``output`` is the stream's first bytes.
    sections: list[tuple[int, str]] = field(default_factory=list)
    #: True once the executor closed the job cleanly.
    executor_healthy: bool = False
    #: The executor closed the job cleanly and may serve another job (``Pair.release``): never once it has
    #: run a hidden case, as it may never compute shown output again.
    executor_reusable: bool = False
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: The caller cancelled the session (``run_session``'s ``cancel``): it stopped where it was, with the
    #: tracer killed and no executor reusable; the record is incomplete.
    cancelled: bool = False

    @property
    def output_truncated(self) -> bool:
        return self.output_total > len(self.output)


Progress = Callable[[RawRun], None]


# ------------------------------------------------------------------------------------------ validation


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -2


def _text(value: Any, limit: int = MAX_TEXT) -> str:
    return value[:limit] if isinstance(value, str) else ""


#: Most characters of each program text kept from a tracer's view (``sandbox.inside.tracer``).
VIEW_MAX_CHARS = 1 << 16


def _cost(value: Any) -> dict[str, float]:
    """The executor's cost-analysis figures (``sandbox.inside.executor.cost_of``): finite non-negative
    numbers under the names it uses, anything else dropped."""
    if not isinstance(value, dict):
        return {}
    return {
        name: float(figure)
        for name, figure in value.items()
        if name in ("flops", "bytes_accessed", "transcendentals")
        and isinstance(figure, int | float)
        and not isinstance(figure, bool)
        and 0 <= figure <= 1e30
    }


#: Most per-leaf flags of the loop check a result may carry (one per output leaf).
_MAX_LOOP_FLAGS = 100_000
#: Most outputs, and device ids per output, a program's reported layouts may hold.
_MAX_LAYOUT_OUTPUTS = 100_000
_MAX_LAYOUT_IDS = 4096


def _shardings(value: Any) -> list[dict[str, Any]] | None:
    """Each output's layout as the executor reported it (``sandbox.shardings``; problems of more than one
    device), bounded here and checked by the judge (``judge.shardings``); None when none came."""
    if not isinstance(value, list) or len(value) > _MAX_LAYOUT_OUTPUTS:
        return None
    out: list[dict[str, Any]] = []
    for item in value:
        tiles = item.get("tiles") if isinstance(item, dict) else None
        groups = item.get("groups") if isinstance(item, dict) else None
        if not isinstance(tiles, list) or not isinstance(groups, list) or len(tiles) > 64:
            return None
        sizes = [len(g) if isinstance(g, list) else _MAX_LAYOUT_IDS + 1 for g in groups]
        if len(groups) > _MAX_LAYOUT_IDS or sum(sizes) > _MAX_LAYOUT_IDS:
            return None
        out.append({"tiles": tiles, "groups": groups})
    return out


def _donation(value: Any) -> dict[str, int] | None:
    """What donation gave a program (``sandbox.inside.executor.donation_of``): ``donated_bytes`` and
    ``aliased_bytes`` as integers in range (-1: unknown), or None when the executor reported none."""
    if not isinstance(value, dict):
        return None
    out: dict[str, int] = {}
    for name in ("donated_bytes", "aliased_bytes"):
        figure = value.get(name)
        if not isinstance(figure, int) or isinstance(figure, bool) or not -1 <= figure <= 1 << 50:
            return None
        out[name] = figure
    return out


def _ms(value: Any) -> float | None:
    """A duration in milliseconds from a frame: a finite number in range, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if 0.0 <= number <= 1e7 else None


def _load_message(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("type") == "loaded":
        return {"type": "loaded"}
    return {
        "type": "load_error",
        "verdict": _text(message.get("verdict"), 40),
        "message": _text(message.get("message")),
    }


def _summary(value: Any) -> dict[str, Any]:
    """The executor's program summary, bounded (op names and counts, custom calls, loops)."""
    if not isinstance(value, dict):
        return {}
    counts = _histogram(value.get("ops"))
    calls = value.get("custom_calls")
    callbacks = value.get("host_callbacks")
    outputs = value.get("barrier_outputs")
    return {
        "ops": counts,
        "loop_ops": _histogram(value.get("loop_ops")),
        "recomputed_ops": _histogram(value.get("recomputed_ops")),
        "barrier_outputs": [v is True for v in outputs[:4096]] if isinstance(outputs, list) else [],
        "custom_calls": [str(c)[:100] for c in calls[:100]] if isinstance(calls, list) else [],
        "host_callbacks": [str(c)[:100] for c in callbacks[:100]] if isinstance(callbacks, list) else [],
        "loops": counts.get("stablehlo.while", 0),
    }


def _histogram(ops: Any) -> dict[str, int]:
    """An op-name histogram from the executor, bounded (500 names of 100 characters, integer counts)."""
    if not isinstance(ops, dict):
        return {}
    return {
        str(k)[:100]: int(v)
        for k, v in list(ops.items())[:500]
        if isinstance(v, int) and not isinstance(v, bool)
    }


__all__ = [
    "CasePlan",
    "CaseReport",
    "ProgramReport",
    "RawRun",
    "SessionJob",
    "SigPlan",
    "Stop",
]
