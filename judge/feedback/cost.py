"""What a program costs beside the reference's: pure ratios of XLA's cost-analysis figures and a line of text.

The figures come from the executor that compiled the learner's program (``sandbox.inside.executor.cost_of``)
and from the reference compiled on the trusted side (``judge.reference_cost``), each with its number of loops
(``stablehlo.while``). A ratio is None when either side has no figure or the reference's is 0 (a program
with no FLOPs cannot be measured in multiples of it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


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
    mine: Mapping[str, float], loops: int | None, reference: Mapping[str, float]
) -> CostComparison:
    """The learner's figures beside the reference's, with ratios and one line that says them."""
    flops, ref_flops = mine.get("flops"), reference.get("flops")
    moved, ref_moved = mine.get("bytes_accessed"), reference.get("bytes_accessed")
    ref_loops_figure = reference.get("loops")
    ref_loops = int(ref_loops_figure) if ref_loops_figure is not None else None
    flops_ratio, bytes_ratio = ratio(flops, ref_flops), ratio(moved, ref_moved)
    parts = []
    if flops_ratio is not None:
        parts.append(f"{_times(flops_ratio)} the reference's FLOPs")
    if bytes_ratio is not None:
        parts.append(f"{_times(bytes_ratio)} its bytes accessed")
    if loops is not None and ref_loops is not None and loops != ref_loops:
        parts.append(f"{_loops(loops)} where the reference has {ref_loops}")
    return CostComparison(
        flops=flops,
        bytes_accessed=moved,
        loops=loops,
        reference_flops=ref_flops,
        reference_bytes_accessed=ref_moved,
        reference_loops=ref_loops,
        flops_ratio=None if flops_ratio is None else round(flops_ratio, 4),
        bytes_ratio=None if bytes_ratio is None else round(bytes_ratio, 4),
        text=", ".join(parts),
    )


def _loops(count: int) -> str:
    return f"{count} loop" if count == 1 else f"{count} loops"
