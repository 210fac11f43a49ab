"""Write ``cases/hidden.json`` for static-args-jit (deterministic: the same bytes on every run).

Run from anywhere: ``python problems/static-args-jit/generate_cases.py``. Every value is a multiple of 1/8
with magnitude at most 10^4 and no axis is longer than 128, so every partial sum is an exact float32 number
(below 2^21 in eighths): sum, mean and max give the same bits in any summation order.

Each (shape, axis, mode, keepdims) is one compile; the 16 signatures below hold 2 to 4 cases each. The
logsumexp cases put the slices at offsets thousands apart (exp overflows past 88.7 and underflows below
-103.9), so an unshifted logsumexp, or one shifted by the largest element of the whole array, is infinite;
the "spread" ones hold values thousands apart inside each slice, so one shifted by the slice's mean is
infinite too. One keepdims-false signature has another axis of length 1, which jnp.squeeze without an
axis drops as well.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_260_227
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"
#: Largest magnitude in the cases (the validator's bound is 10^4).
TOP = 9_999.0


def _eighths(rng: np.random.Generator, shape: tuple[int, ...], scale: float) -> Any:
    """Multiples of 1/8 in [-scale, scale]."""
    return rng.integers(-round(8 * scale), round(8 * scale) + 1, size=shape) / 8.0


def _far_apart(rng: np.random.Generator, shape: tuple[int, ...], axis: int, low: float, high: float) -> Any:
    """Each slice along ``axis`` near its own offset in [low, high] (multiples of 1/8), spread by up to 4."""
    offset_shape = list(shape)
    offset_shape[axis] = 1
    offsets = rng.integers(round(8 * low), round(8 * high) + 1, size=offset_shape) / 8.0
    values = offsets + _eighths(rng, shape, 4.0)
    return np.clip(values, -TOP, TOP)


def _spread(rng: np.random.Generator, shape: tuple[int, ...], axis: int) -> Any:
    """Every slice along ``axis`` (of length 2 or more) holds values thousands apart: its first entry near
    +TOP or -TOP, its second near the other end, the rest anywhere between (multiples of 1/8). A shift by
    the slice's mean leaves terms near TOP, whose exp overflows."""
    values = _eighths(rng, shape, TOP)
    moved = np.moveaxis(values, axis, 0)
    if moved.shape[0] >= 2:
        sign = np.where(rng.random(moved.shape[1:]) < 0.5, 1.0, -1.0)
        moved[0] = sign * (TOP - np.abs(_eighths(rng, moved.shape[1:], 50.0)))
        moved[1] = -sign * (TOP - np.abs(_eighths(rng, moved.shape[1:], 50.0)))
    return np.moveaxis(moved, 0, axis)


#: (label, shape, axis, mode, keepdims, value makers). The first four signatures are the examples'.
SIGNATURES: list[tuple[str, tuple[int, ...], int, str, bool, list[str]]] = [
    ("sum_over_rows_lookalike", (2, 3), 1, "sum", False, ["small", "wide"]),
    ("mean_kept_axis_lookalike", (2, 3), 1, "mean", True, ["small", "wide"]),
    ("max_negative_axis_lookalike", (2, 2, 2), -3, "max", True, ["small", "negative"]),
    ("logsumexp_large_lookalike", (2, 3), -1, "logsumexp", False, ["far", "far"]),
    ("vector_mean_kept", (7,), 0, "mean", True, ["small", "wide"]),
    ("vector_max_last", (9,), -1, "max", False, ["negative", "wide"]),
    ("matrix_mean_axis_minus_2", (4, 8), -2, "mean", False, ["small", "wide", "top"]),
    ("logsumexp_rows_far_apart", (8, 16), -1, "logsumexp", False, ["far", "far_high", "far_low", "spread"]),
    ("cube_sum_axis_1_kept", (3, 4, 5), 1, "sum", True, ["small", "top"]),
    ("cube_mean_last", (3, 4, 5), 2, "mean", False, ["small", "wide"]),
    ("cube_logsumexp_axis_0_kept", (3, 4, 5), 0, "logsumexp", True, ["far", "far_high", "spread"]),
    ("matrix_max_axis_0", (16, 32), 0, "max", False, ["negative", "wide"]),
    ("cube_sum_axis_minus_2", (4, 6, 8), -2, "sum", False, ["small", "top"]),
    ("largest_mean_kept", (31, 128), 1, "mean", True, ["small", "top"]),
    ("length_one_axis_logsumexp", (6, 1, 5), -2, "logsumexp", True, ["far", "small"]),
    ("other_length_one_axis_dropped", (5, 1, 8), 2, "sum", False, ["small", "wide"]),
]


def _values(rng: np.random.Generator, maker: str, shape: tuple[int, ...], axis: int) -> Any:
    if maker == "small":
        return _eighths(rng, shape, 8.0)
    if maker == "wide":
        return _eighths(rng, shape, 500.0)
    if maker == "top":
        values = _eighths(rng, shape, TOP)
        values.flat[0] = TOP if values.flat[0] >= 0 else -TOP
        return values
    if maker == "negative":
        return -4.0 - np.abs(_eighths(rng, shape, 60.0))
    if maker == "far":
        return _far_apart(rng, shape, axis, -TOP, TOP)
    if maker == "far_high":
        return _far_apart(rng, shape, axis, 200.0, TOP)
    if maker == "far_low":
        return _far_apart(rng, shape, axis, -TOP, -200.0)
    if maker == "spread":
        return _spread(rng, shape, axis)
    raise ValueError(maker)


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []
    for label, shape, axis, mode, keepdims, makers in SIGNATURES:
        for i, maker in enumerate(makers):
            args = {
                "x": f32(_values(rng, maker, shape, axis)),
                "axis": axis,
                "mode": mode,
                "keepdims": keepdims,
            }
            name = f"{label}_{i + 1}_{maker}"
            cases.append({"name": name, "visibility": "hidden", "dtype": "float32", "args": args})
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
