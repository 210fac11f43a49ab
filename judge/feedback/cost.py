"""What a program costs beside the reference's: pure ratios of XLA's cost-analysis figures and a line of text.

The figures come from the executor that compiled the learner's program (``sandbox.inside.executor.cost_of``)
and from the reference compiled on the trusted side (``judge.reference_cost``), each with its number of loops
(``stablehlo.while``). A ratio is None when either side has no figure or the reference's is 0 (a program
with no FLOPs cannot be measured in multiples of it).

Times are figures too: the learner's compile and run times are the executor's (charged time, see
``sandbox.schedclock``), the reference's were measured once in the judge's process with the same compiler
flags (its compile, and the fastest of a few runs). They come from two processes at two moments, so the line
names a time ratio only when it is far from 1 (``TIME_NOTED``); the figures and ratios are always in the
result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

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


def _times(value: float) -> str:
    return f"{value:.2g}x" if value < 10 else f"{value:.0f}x"


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
    compile_ratio, run_ratio = _time_ratio(compile_ms, ref_compile), _time_ratio(run_ms, ref_run)
    parts = []
    if flops_ratio is not None:
        parts.append(f"{_times(flops_ratio)} the reference's FLOPs")
    if bytes_ratio is not None:
        parts.append(f"{_times(bytes_ratio)} its bytes accessed")
    if loops is not None and ref_loops is not None and loops != ref_loops:
        parts.append(f"{_loops(loops)} where the reference has {ref_loops}")
    for what, value in (("compile", compile_ratio), ("run", run_ratio)):
        if value is not None and (value >= TIME_NOTED or value <= 1 / TIME_NOTED):
            parts.append(f"{_times(value)} its {what} time")
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


def _time_ratio(mine: float | None, reference: float | None) -> float | None:
    """A time ratio; None when either time is missing or the reference's is 0 (too short to divide by)."""
    if mine is None or reference is None or reference <= 0:
        return None
    return mine / reference


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _loops(count: int) -> str:
    return f"{count} loop" if count == 1 else f"{count} loops"
