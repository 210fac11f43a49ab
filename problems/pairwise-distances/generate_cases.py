"""Write ``cases/hidden.json`` for pairwise-distances (deterministic: the same bytes on every run).

Run it after every change: ``python problems/pairwise-distances/generate_cases.py``. ``judge check`` fails
when the file differs from what this script writes. Values are exact in the case dtype (``judge.casegen``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import bf16, f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_130
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, x: Any, y: Any, dtype: str = "float32") -> None:
        cast = bf16 if dtype == "bfloat16" else f32
        args = {"x": cast(np.asarray(x).tolist()), "y": cast(np.asarray(y).tolist())}
        cases.append({"name": name, "visibility": "hidden", "dtype": dtype, "args": args})

    def points(count: int, dim: int, scale: float = 2.0, offset: float = 0.0) -> Any:
        return offset + scale * rng.standard_normal((count, dim))

    def with_copies(x: Any, m: int, dim: int, scale: float = 2.0) -> Any:
        """m points: every row of x once (so some distances are exactly 0), the rest random, shuffled."""
        y = np.concatenate([x, points(m - len(x), dim, scale)])
        return y[rng.permutation(m)]

    # The examples' shapes again, with other values.
    add("example_1_lookalike", points(2, 2), points(3, 2))
    add("example_2_lookalike", points(1, 3), points(3, 3))
    # Every point of x also in y: exact zeros (an epsilon under the root, or a negative expansion, fails).
    x = points(6, 4)
    add("copies_of_x_in_y", x, with_copies(x, 9, 4))
    x = np.round(points(8, 16), 1)  # decimals are inexact in binary: the expansion rounds off zero
    add("copies_decimal_points", x, with_copies(x, 12, 16))
    # Points far from the origin and close together: |a|^2 + |b|^2 - 2 a.b cancels to noise.
    add("far_from_origin", points(5, 3, 0.01, 1000.0), points(7, 3, 0.01, 1000.0))
    add("far_from_origin_negative", points(6, 8, 0.5, -3000.0), points(4, 8, 0.5, -3000.0))
    # Square results: an (m, n) transposed result has the right shape here and the wrong values.
    add("square_result", points(5, 3), points(5, 3))
    # One coordinate; one point in x; one point in y.
    add("one_coordinate", points(7, 1), points(3, 1))
    add("one_point_in_y", points(10, 5), points(1, 5))
    # Mixed scales, and the largest case.
    add("mixed_scales", points(9, 6, 1e4), points(11, 6, 1e-2))
    add("largest", points(32, 64), points(16, 64))
    # bfloat16: the examples' shape, exact zeros, and wide points summed in float32.
    add("bf16_example_1_shape", points(2, 2), points(3, 2), "bfloat16")
    x = points(6, 4)
    add("bf16_copies_of_x_in_y", x, with_copies(x, 9, 4), "bfloat16")
    add("bf16_wide_points", points(12, 48), points(20, 48), "bfloat16")
    add("bf16_large_values", points(4, 32, 300.0), points(6, 32, 300.0), "bfloat16")
    # Coordinates near the stated bound 1e15, spread far apart, with copies (squared differences up to
    # ~1e31 stay finite in float32; the expansion cancels to noise); then two clusters at opposite
    # corners. The shapes of earlier cases, so no new compile signature.
    x = np.clip(points(6, 8, 3e14), -1e15, 1e15)
    add("values_near_the_bound", x, np.concatenate([x[:2], np.clip(points(2, 8, 3e14), -1e15, 1e15)]))
    add("near_the_bound_opposite_corners", points(5, 3, 1e9, 9e14), points(7, 3, 1e9, -9e14))
    x = np.clip(points(6, 4, 3e14), -1e15, 1e15)
    add("bf16_values_near_the_bound", x, with_copies(x, 9, 4, 1e14), "bfloat16")
    # Every point the same: every distance is exactly 0, so the result's magnitude is 0 and the bfloat16
    # tolerance is a subnormal; even a tiny epsilon under the root (sqrt(d + 1e-12) = 1e-6, which the
    # float32 atol of 1e-6 lets through) is far outside it. Shapes of earlier cases.
    point = points(1, 4)
    add("bf16_all_points_identical", np.repeat(point, 6, axis=0), np.repeat(point, 9, axis=0), "bfloat16")
    point = points(1, 2, 50.0)
    small = "bf16_all_points_identical_small"
    add(small, np.repeat(point, 2, axis=0), np.repeat(point, 3, axis=0), "bfloat16")

    # Tiny nonzero distances (1e-4 to 1e-3; the statement allows any distance down to 0): a guard that
    # returns 0 below some small squared distance, or sqrt(s + eps), moves them by their whole size. The
    # bfloat16 cases keep every distance tiny (points within ~1e-3 of each other near the origin), so the
    # tolerance, 1.5 ulp of the largest distance at least, stays tiny too. Shapes of earlier cases.
    def nudged(x: Any, low: float, high: float) -> Any:
        """x moved by a random direction of length low to high (exactly representable or not: the case's
        distances are those of the stored values)."""
        step = rng.standard_normal(x.shape)
        step *= rng.uniform(low, high, size=(len(x), 1)) / np.linalg.norm(step, axis=1, keepdims=True)
        return x + step

    x = points(6, 4)
    y = np.concatenate([x[:3], nudged(x, 1e-4, 8e-4), points(3, 4)])[rng.permutation(12)][:9]
    add("tiny_distances", x, y)
    x = points(5, 3, 4e-4, 0.5)
    add("tiny_distances_cluster", x, np.concatenate([nudged(x, 1e-4, 5e-4), points(2, 3, 4e-4, 0.5)]))
    x = points(6, 4, 3e-4)
    add("bf16_tiny_distances", x, with_copies(x, 9, 4, 3e-4), "bfloat16")
    add("bf16_tiny_distances_small", points(2, 2, 3e-4), points(3, 2, 3e-4), "bfloat16")

    # The size bounds: 256 points on each side, 8 coordinates, 4096 numbers in all (a result built in
    # fixed-size chunks, or a hard-coded row count, goes wrong only at the largest sizes). Appended last,
    # so the earlier cases keep their values; one new compile signature (16 in all).
    x = points(256, 8)
    add("most_points_and_numbers", x, with_copies(x[::4], 256, 8))
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
