"""What a program costs beside the reference's: XLA's cost-analysis figures side by side, their ratios, and a
line of text.

The figures come from the executor that compiled the learner's program (``sandbox.inside.executor.cost_of``)
and from the reference compiled on the trusted side (``judge.feedback.reference_cost``), each with its number
of loops (``stablehlo.while``). A ratio is None when either side has no figure or the reference's is 0 (a
program with no FLOPs cannot be measured in multiples of it). The line names each figure beside the
reference's ("29 FLOPs (the reference: 10, 2.9x)"), the ratio only where it is not 1.

Times are figures too: the learner's compile and run times are the executor's (charged time, see
``sandbox.shared.schedclock``), the reference's were measured once in the judge's process with the same
compiler flags (its compile, and the fastest of a few runs). A time ratio exists only when both times are
``measurable`` (at least ``MEASURABLE_MS``, far above what the timing of one run varies by on its own): the
ratio of two sub-millisecond timings says how the timers jittered, not how the programs compare. The line
names a measurable pair of times, and their ratio when it is far from 1 (``TIME_NOTED``: two processes at
two moments).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: How the executor times a case (``sandbox.inside.executor``): one run of the compiled program (no repeat
#: to take the best of), the first after its compile, on a charged-time clock (``sandbox.shared.schedclock``).
EXECUTOR_RUNS = 1
#: What one such timing varies by on its own, whatever the program: the runtime's dispatch and thread-pool
#: wake-up, the first touch of the output buffers, an interrupt or a scheduler tick inside the interval.
#: Measured: a tree-scaling program's first run after its compile, timed as the executor times it, took
#: 0.52-0.84 ms (30 fresh programs) where the fastest of three warm runs took 0.015-0.035 ms: the
#: "841x its run time" of issue 41 was such a pair, noise over noise.
TIMER_NOISE_MS = 1.0
#: How many times the noise of its timing a time must be to be measured: then the noise moves it by at most
#: a tenth of itself (the noise of a best of n runs shrinks about as 1/sqrt(n); the executor makes one).
NOISE_MARGIN = 10.0
#: The shortest time a ratio may rest on: ``NOISE_MARGIN`` times the noise of ``EXECUTOR_RUNS`` runs.
MEASURABLE_MS = NOISE_MARGIN * TIMER_NOISE_MS / EXECUTOR_RUNS**0.5
#: A time ratio the line names: at least this many times the reference's, or at most its inverse.
TIME_NOTED = 2.0


@dataclass(frozen=True)
class CostComparison:
    flops: float | None
    bytes_accessed: float | None
    loops: int | None
    reference_flops: float | None
    reference_bytes_accessed: float | None
    reference_loops: int | None
    flops_ratio: float | None
    bytes_ratio: float | None
    text: str
    compile_ms: float | None = None
    run_ms: float | None = None
    reference_compile_ms: float | None = None
    reference_run_ms: float | None = None
    compile_ratio: float | None = None
    run_ratio: float | None = None


def ratio(mine: float | None, reference: float | None) -> float | None:
    """``mine / reference``, or None when either is missing or the reference's is 0 (then 1.0 if both are)."""
    if mine is None or reference is None:
        return None
    if reference == 0:
        return 1.0 if mine == 0 else None
    return mine / reference


def measurable(ms: float | None) -> bool:
    """Whether a time (in ms) is far enough above the noise of its timing to be compared
    (``MEASURABLE_MS``)."""
    return ms is not None and ms >= MEASURABLE_MS


def time_ratio(mine: float | None, reference: float | None) -> float | None:
    """``mine / reference`` of two times, or None unless both are ``measurable``."""
    if mine is None or reference is None or not (measurable(mine) and measurable(reference)):
        return None
    return mine / reference


def _times(value: float) -> str:
    return f"{value:.2g}x" if value < 10 else f"{value:.0f}x"


def _scaled(value: float, scale: float, unit: str) -> str:
    shown = value / scale
    return (f"{shown:.1f}".rstrip("0").rstrip(".") if shown < 100 else f"{shown:.0f}") + unit


def _count(value: float) -> str:
    """A figure for reading: "980", "12.3 k", "4.1 M", "2 G"."""
    for scale, unit in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(value) >= scale:
            return _scaled(value, scale, unit)
    return f"{value:.0f}" if value == int(value) else f"{value:.3g}"


def _bytes(value: float) -> str:
    for scale, unit in ((2**30, " GiB"), (2**20, " MiB"), (2**10, " KiB")):
        if value >= scale:
            return _scaled(value, scale, unit)
    return f"{value:.0f} bytes"


def _ms(value: float) -> str:
    return f"{value:.0f} ms" if value >= 100 else f"{value:.3g} ms"


def _beside(mine: str, reference: str, value: float | None, *, noted: float = 1.0) -> str:
    """``mine (the reference: reference[, ratio])``: the ratio when it is ``noted`` away from 1."""
    far = value is not None and (value >= noted or value <= 1 / noted) and round(value, 2) != 1
    return f"{mine} (the reference: {reference}{', ' + _times(value) if far and value else ''})"


def compare_cost(
    mine: Mapping[str, float],
    loops: int | None,
    reference: Mapping[str, float],
    *,
    compile_ms: float | None = None,
    run_ms: float | None = None,
) -> CostComparison:
    """The learner's figures beside the reference's, with ratios and one line that says them.
    ``compile_ms``/``run_ms``: the learner's program's (None when not measured or not shown)."""
    flops, ref_flops = mine.get("flops"), reference.get("flops")
    moved, ref_moved = mine.get("bytes_accessed"), reference.get("bytes_accessed")
    ref_loops_figure = reference.get("loops")
    ref_loops = int(ref_loops_figure) if ref_loops_figure is not None else None
    flops_ratio, bytes_ratio = ratio(flops, ref_flops), ratio(moved, ref_moved)
    ref_compile, ref_run = reference.get("compile_ms"), reference.get("run_ms")
    compile_ratio, run_ratio = time_ratio(compile_ms, ref_compile), time_ratio(run_ms, ref_run)
    parts = []
    if flops is not None and ref_flops is not None:
        parts.append(_beside(f"{_count(flops)} FLOPs", _count(ref_flops), flops_ratio))
    if moved is not None and ref_moved is not None:
        parts.append(_beside(f"{_bytes(moved)} accessed", _bytes(ref_moved), bytes_ratio))
    if loops is not None and ref_loops is not None and loops != ref_loops:
        parts.append(f"{_loops(loops)} where the reference has {ref_loops}")
    for what, value, mine_ms, ref_ms in (
        ("compile", compile_ratio, compile_ms, ref_compile),
        ("run", run_ratio, run_ms, ref_run),
    ):
        if value is not None and mine_ms is not None and ref_ms is not None:
            parts.append(_beside(f"{what} {_ms(mine_ms)}", _ms(ref_ms), value, noted=TIME_NOTED))
    return CostComparison(
        flops=flops,
        bytes_accessed=moved,
        loops=loops,
        reference_flops=ref_flops,
        reference_bytes_accessed=ref_moved,
        reference_loops=ref_loops,
        flops_ratio=_rounded(flops_ratio),
        bytes_ratio=_rounded(bytes_ratio),
        text=", ".join(parts),
        compile_ms=compile_ms,
        run_ms=run_ms,
        reference_compile_ms=ref_compile,
        reference_run_ms=ref_run,
        compile_ratio=_rounded(compile_ratio),
        run_ratio=_rounded(run_ratio),
    )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _loops(count: int) -> str:
    return f"{count} loop" if count == 1 else f"{count} loops"
