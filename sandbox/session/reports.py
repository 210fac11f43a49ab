"""The record of a session (``RawRun``) and the one place where a sandbox's message becomes part of it.

Every message a tracer or an executor sends that the judge keeps is decoded here, once, into frozen
dataclasses with checked types: a field of the wrong type, a string too long, a number out of range or an
oversized list becomes the field's empty value (or the whole part None), exactly as bounded as the monitor
kept it, so the judge survives any bytes and reads typed attributes only. What is decoded later, by the
judge itself: the output skeleton (``judge.core.output_tree.assemble``) and each output's layout
(``sandbox.shared.layouts.from_parts``), which need the reference to be checked against.

The decoders (``decode_*``) take a frame's message (a dict from JSON, untrusted) and never raise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

#: ``case``/``wall``: the submission used its time; ``overload``: the machine kept it waiting so long that
#: the judge gave up (its own failure, never the learner's verdict).
TimeoutKind = Literal["case", "wall", "overload"]
Party = Literal["tracer", "executor"]

#: Largest message or claim text kept from the tracer.
MAX_TEXT = 4000
#: Most characters of each program text kept from a tracer's view (``sandbox.inside.tracer``).
VIEW_MAX_CHARS = 1 << 16
#: Most per-leaf flags of the loop check a result may carry (one per output leaf).
MAX_LOOP_FLAGS = 100_000
#: Most outputs, and device ids per output, a program's reported layouts may hold.
_MAX_LAYOUT_OUTPUTS = 100_000
_MAX_LAYOUT_IDS = 4096


# ------------------------------------------------------------------------------------------ scalars


def wire_int(value: Any) -> int:
    """An integer from a frame (not a bool), else -2 (no index the judge uses)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else -2


def bounded_text(value: Any, limit: int = MAX_TEXT) -> str:
    """A string from a frame, cut at ``limit`` characters; anything else is empty."""
    return value[:limit] if isinstance(value, str) else ""


def duration_ms(value: Any) -> float | None:
    """A duration in milliseconds from a frame: a finite number in range, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if 0.0 <= number <= 1e7 else None


def _optional_text(value: Any, limit: int) -> str | None:
    return bounded_text(value, limit) if isinstance(value, str) else None


# ------------------------------------------------------------------------------------------ the tracer


@dataclass(frozen=True)
class Load:
    """The tracer's ``loaded`` or ``load_error`` message (the claimed verdict is checked by the judge)."""

    type: Literal["loaded", "load_error"]
    verdict: str = ""
    message: str = ""

    @property
    def failed(self) -> bool:
        return self.type == "load_error"


def decode_load(message: Mapping[str, Any]) -> Load:
    if message.get("type") == "loaded":
        return Load("loaded")
    return Load("load_error", bounded_text(message.get("verdict"), 40), bounded_text(message.get("message")))


@dataclass(frozen=True)
class TraceFailure:
    """``trace_failed`` (or ``retrace_failed``): the tracer's own claim about its case. ``line``, ``error``
    and ``advice`` are data, for the judge to compose a hidden case's message itself (``judge.grading``)."""

    verdict: str
    message: str
    reason: str | None = None
    line: int = -2
    error: str | None = None
    advice: str | None = None


def decode_failure(message: Mapping[str, Any]) -> TraceFailure:
    reason = message.get("reason")
    return TraceFailure(
        verdict=bounded_text(message.get("verdict"), 40),
        message=bounded_text(message.get("message")),
        reason=bounded_text(reason, 40) if reason is not None else None,
        line=wire_int(message.get("line")),
        error=_optional_text(message.get("error"), 60),
        advice=_optional_text(message.get("advice"), 40),
    )


@dataclass(frozen=True)
class ProgramText:
    """A public signature's program as text (the tracer's claim, shown back to its learner only)."""

    jaxpr: str = ""
    stablehlo: str = ""


def decode_view(view: Mapping[str, Any]) -> ProgramText:
    return ProgramText(
        bounded_text(view.get("jaxpr"), VIEW_MAX_CHARS), bounded_text(view.get("stablehlo"), VIEW_MAX_CHARS)
    )


# ------------------------------------------------------------------------------------------ the executor


@dataclass(frozen=True)
class Summary:
    """The executor's summary of a program, bounded: op names and counts, custom calls, loops."""

    ops: Mapping[str, int] = field(default_factory=dict)
    loop_ops: Mapping[str, int] = field(default_factory=dict)
    recomputed_ops: Mapping[str, int] = field(default_factory=dict)
    barrier_outputs: tuple[bool, ...] = ()
    custom_calls: tuple[str, ...] = ()
    host_callbacks: tuple[str, ...] = ()
    loops: int = 0


def decode_summary(value: Any) -> Summary:
    """The executor's program summary, bounded (op names and counts, custom calls, loops)."""
    if not isinstance(value, dict):
        return Summary()
    counts = _histogram(value.get("ops"))
    calls = value.get("custom_calls")
    callbacks = value.get("host_callbacks")
    outputs = value.get("barrier_outputs")
    return Summary(
        ops=counts,
        loop_ops=_histogram(value.get("loop_ops")),
        recomputed_ops=_histogram(value.get("recomputed_ops")),
        barrier_outputs=tuple(v is True for v in outputs[:4096]) if isinstance(outputs, list) else (),
        custom_calls=tuple(str(c)[:100] for c in calls[:100]) if isinstance(calls, list) else (),
        host_callbacks=tuple(str(c)[:100] for c in callbacks[:100]) if isinstance(callbacks, list) else (),
        loops=counts.get("stablehlo.while", 0),
    )


def _histogram(ops: Any) -> dict[str, int]:
    """An op-name histogram from the executor, bounded (500 names of 100 characters, integer counts)."""
    if not isinstance(ops, dict):
        return {}
    return {
        str(k)[:100]: int(v)
        for k, v in list(ops.items())[:500]
        if isinstance(v, int) and not isinstance(v, bool)
    }


@dataclass(frozen=True)
class Cost:
    """The executor's cost-analysis figures (``sandbox.inside.executor.cost_of``), each finite and
    non-negative, None where it reported none."""

    flops: float | None = None
    bytes_accessed: float | None = None
    transcendentals: float | None = None

    def figures(self) -> dict[str, float]:
        """The figures it has, by name."""
        named = {
            "flops": self.flops,
            "bytes_accessed": self.bytes_accessed,
            "transcendentals": self.transcendentals,
        }
        return {name: figure for name, figure in named.items() if figure is not None}


def decode_cost(value: Any) -> Cost:
    if not isinstance(value, dict):
        return Cost()
    figures = {
        name: float(figure)
        for name, figure in value.items()
        if name in ("flops", "bytes_accessed", "transcendentals")
        and isinstance(figure, int | float)
        and not isinstance(figure, bool)
        and 0 <= figure <= 1e30
    }
    return Cost(figures.get("flops"), figures.get("bytes_accessed"), figures.get("transcendentals"))


@dataclass(frozen=True)
class Donation:
    """What donation gave a program (``sandbox.inside.executor.donation_of``), in bytes (-1: unknown)."""

    donated_bytes: int
    aliased_bytes: int


def decode_donation(value: Any) -> Donation | None:
    """None when the executor reported none, or any figure is not an integer in range."""
    if not isinstance(value, dict):
        return None
    figures: list[int] = []
    for name in ("donated_bytes", "aliased_bytes"):
        figure = value.get(name)
        if not isinstance(figure, int) or isinstance(figure, bool) or not -1 <= figure <= 1 << 50:
            return None
        figures.append(figure)
    return Donation(*figures)


@dataclass(frozen=True)
class OutputLayout:
    """One output's layout as the executor reported it (``sandbox.shared.layouts``), bounded in size only: its
    entries are checked against the output's rank and the devices by ``sandbox.shared.layouts.from_parts``."""

    tiles: tuple[object, ...]
    groups: tuple[object, ...]


def decode_shardings(value: Any) -> tuple[OutputLayout, ...] | None:
    """Each output's layout (problems of more than one device), bounded here and checked by the judge
    (``judge.core.shardings``); None when none came or they are too large."""
    if not isinstance(value, list) or len(value) > _MAX_LAYOUT_OUTPUTS:
        return None
    out: list[OutputLayout] = []
    for item in value:
        tiles = item.get("tiles") if isinstance(item, dict) else None
        groups = item.get("groups") if isinstance(item, dict) else None
        if not isinstance(tiles, list) or not isinstance(groups, list) or len(tiles) > 64:
            return None
        sizes = [len(g) if isinstance(g, list) else _MAX_LAYOUT_IDS + 1 for g in groups]
        if len(groups) > _MAX_LAYOUT_IDS or sum(sizes) > _MAX_LAYOUT_IDS:
            return None
        out.append(OutputLayout(tuple(tiles), tuple(groups)))
    return tuple(out)


@dataclass(frozen=True)
class Compiled:
    """The executor's ``compiled`` reply."""

    summary: Summary = field(default_factory=Summary)
    compile_ms: float | None = None
    compile_wall_ms: float | None = None
    #: Which compiler pipeline built it (``sandbox.inside.compiling``).
    pipeline: str = ""
    #: The executor had compiled the same program before (its cache).
    cached: bool = False
    #: The compiled program's identity: the same key, the same program.
    key: str = ""
    cost: Cost = field(default_factory=Cost)
    donation: Donation | None = None
    shardings: tuple[OutputLayout, ...] | None = None


def decode_compiled(message: Mapping[str, Any]) -> Compiled:
    return Compiled(
        summary=decode_summary(message.get("summary")),
        compile_ms=duration_ms(message.get("compile_ms")),
        compile_wall_ms=duration_ms(message.get("compile_wall_ms")),
        pipeline=bounded_text(message.get("pipeline"), 16),
        cached=message.get("cached") is True,
        key=bounded_text(message.get("key"), 64),
        cost=decode_cost(message.get("cost")),
        donation=decode_donation(message.get("donation")),
        shardings=decode_shardings(message.get("shardings")),
    )


@dataclass(frozen=True)
class Refused:
    """The executor's ``refused`` reply: it would not compile the program (a rule, a leak, the cap...)."""

    kind: str
    message: str
    summary: Summary = field(default_factory=Summary)


def decode_refused(message: Mapping[str, Any]) -> Refused:
    return Refused(
        bounded_text(message.get("kind"), 40),
        bounded_text(message.get("message")),
        decode_summary(message.get("summary")),
    )


@dataclass(frozen=True)
class RunError:
    """The executor's ``run_error``: ``kind`` memory or runtime (as it says), and its message."""

    kind: str
    message: str


def decode_run_error(message: Mapping[str, Any]) -> RunError:
    return RunError(bounded_text(message.get("kind"), 20), bounded_text(message.get("message")))


def decode_loops_matter(value: Any) -> list[bool] | None:
    """The loop check's flags, one per output leaf, or None when they are not a list of booleans."""
    if isinstance(value, list) and all(isinstance(m, bool) for m in value):
        return [bool(m) for m in value[:MAX_LOOP_FLAGS]]
    return None


# ------------------------------------------------------------------------------------------ the record


@dataclass
class ProgramReport:
    """What happened to one signature's program: the tracer's part, then the executor's."""

    sig: int
    #: The output's tree skeleton (the tracer's claim), decoded against the outputs by the judge.
    skeleton: Any = None
    debug: bool = False
    #: The trace made two or more jax.debug calls, one of them unordered (XLA may run them in any order):
    #: the tracer's claim, for a note beside the printed output only.
    debug_unordered: bool = False
    mutation: str | None = None
    trace_ms: float | None = None
    #: A public signature's program as text (the tracer's claim, for display only).
    view: ProgramText | None = None
    #: ``trace_failed`` (or ``retrace_failed``): the tracer's own claim.
    failure: TraceFailure | None = None
    #: The executor's ``compiled`` reply.
    compiled: Compiled | None = None
    #: The executor's ``refused`` reply.
    refused: Refused | None = None


@dataclass
class CaseReport:
    index: int
    outputs: list[np.ndarray[Any, Any]] | None = None
    run_ms: float | None = None
    #: The executor's ``run_error``.
    error: RunError | None = None
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
    load: Load | None = None
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
    #: The tracer's section marks (``sandbox.shared.output_mark.SectionSplitter``): (stream offset, label), in
    #: order; the output from one offset to the next was printed while that label ran. Stream offsets count
    #: every byte printed (not only those kept); ``output`` is the stream's first bytes.
    sections: list[tuple[int, str]] = field(default_factory=list)
    #: True once the executor closed the job cleanly.
    executor_healthy: bool = False
    #: The executor closed the job cleanly and may serve another job (``GradingProcesses.release``): never
    #: once it has run a hidden case, as it may never compute shown output again.
    executor_reusable: bool = False
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: The caller cancelled the session (``run_session``'s ``cancel``): it stopped where it was, with the
    #: tracer killed and no executor reusable; the record is incomplete.
    cancelled: bool = False

    @property
    def output_truncated(self) -> bool:
        return self.output_total > len(self.output)


__all__ = [
    "CaseReport",
    "Compiled",
    "Cost",
    "Donation",
    "Load",
    "OutputLayout",
    "Party",
    "ProgramReport",
    "ProgramText",
    "RawRun",
    "Refused",
    "RunError",
    "Stop",
    "Summary",
    "TimeoutKind",
    "TraceFailure",
    "bounded_text",
    "decode_compiled",
    "decode_cost",
    "decode_donation",
    "decode_failure",
    "decode_load",
    "decode_loops_matter",
    "decode_refused",
    "decode_run_error",
    "decode_shardings",
    "decode_summary",
    "decode_view",
    "duration_ms",
    "wire_int",
]
