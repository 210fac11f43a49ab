"""Write ``cases/hidden.json`` for spectral-norm (deterministic: the same bytes on every run).

Run it after every change: ``python problems/spectral-norm/generate_cases.py``. ``judge check`` fails when the
file differs from what this script writes. Values are exact in the case dtype (``judge.casegen``), so the
judge sees exactly these inputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import bf16, f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_201
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, w: Any, u0: Any, num_iters: int, dtype: str = "float32") -> None:
        cast = bf16 if dtype == "bfloat16" else f32
        args = {
            "w": cast(np.asarray(w).tolist()),
            "u0": cast(np.asarray(u0).tolist()),
            "num_iters": num_iters,
        }
        cases.append({"name": name, "visibility": "hidden", "dtype": dtype, "args": args})

    def gaussian(m: int, n: int, scale: float = 1.0) -> Any:
        return scale * rng.standard_normal((m, n))

    def with_singular_values(m: int, n: int, values: list[float]) -> Any:
        """An (m, n) matrix U diag(values) V^T with random orthonormal U and V: a chosen spectrum."""
        k = len(values)
        left, _ = np.linalg.qr(rng.standard_normal((m, k)))
        right, _ = np.linalg.qr(rng.standard_normal((n, k)))
        return (left * np.asarray(values)) @ right.T

    def start(m: int) -> Any:
        return rng.standard_normal(m)

    # The examples' shapes and iteration counts again, with other values (non-symmetric, non-zero).
    add("example_1_lookalike", gaussian(2, 2), start(2), 1)
    add("example_2_lookalike", gaussian(2, 3), start(2), 2)
    add("example_3_lookalike", gaussian(3, 2), start(3), 3)
    # Close top singular values and three iterations: the estimate is far from the exact norm (an SVD or
    # jnp.linalg.norm(w, 2) fails), and one iteration more or less moves it clearly.
    add("close_singular_values_tall", with_singular_values(8, 5, [3.0, 2.85, 1.8, 0.9, 0.3]), start(8), 3)
    add("close_singular_values_wide", with_singular_values(5, 8, [2.0, 1.9, 1.5, 0.4, 0.1]), start(5), 3)
    # The zero matrix, and a start vector with w.T @ u0 = 0 exactly (rows 0 and 1 equal, u0 = e0 - e1):
    # every result is zero, with no division by zero.
    add("zero_matrix", np.zeros((8, 5)), start(8), 3)
    w = np.round(gaussian(8, 5, 3.0))
    w[1] = w[0]
    add("start_orthogonal_to_columns", w, [1.0, -1.0, 0, 0, 0, 0, 0, 0], 3)
    # Tiny values (the norms are ~1e-9): an epsilon added to a norm is a large error, and products of
    # many un-normalised steps underflow to zero.
    # The tall one has a clear gap below its top singular value: with a gaussian w, three iterations left the
    # vectors so far from converged that two orders of the same products differed by ~40 ulp there.
    add("tiny_values_tall", 1e-10 * with_singular_values(8, 5, [3.0, 1.6, 1.1, 0.7, 0.2]), start(8), 3)
    add("tiny_values_wide", gaussian(5, 8, 1e-10), start(5), 3)
    add("tiny_values_square", gaussian(12, 12, 1e-10), start(12), 25)
    # Large values and 25 iterations: un-normalised vectors grow like sigma^50 and overflow.
    add("large_values_square", gaussian(12, 12, 30.0), start(12), 25)
    add(
        "slow_convergence_square", with_singular_values(12, 12, [5.0, 4.9, 4.0, 2.0, 1.0, 0.5]), start(12), 25
    )
    # A rank-one matrix: one iteration finds the exact norm and vectors.
    add("rank_one_wide", np.outer(start(5), start(8)), start(5), 3)
    # The largest case, a single row and a single column.
    add(
        "largest",
        with_singular_values(32, 16, [10.0, 9.0, 8.5, 4.0, 2.0, 1.0]) + gaussian(32, 16, 0.05),
        start(32),
        10,
    )
    add("single_row", gaussian(1, 6), [-2.5], 2)
    add("single_column", gaussian(6, 1), start(6), 2)
    # One iteration on a square matrix with a spread spectrum: transposing w gives other values.
    add("one_iteration_square", gaussian(12, 12), start(12), 1)
    # bfloat16: arithmetic in float32, results cast back to bfloat16.
    add("bf16_tall", gaussian(8, 5), start(8), 3, "bfloat16")
    # A start vector near the stated bound 1e3 (only its direction matters).
    add("large_start_vector", gaussian(8, 5), np.clip(400.0 * np.asarray(start(8)), -1e3, 1e3), 3)
    add(
        "bf16_large_start_vector",
        gaussian(8, 5),
        np.clip(400.0 * np.asarray(start(8)), -1e3, 1e3),
        3,
        "bfloat16",
    )
    add("bf16_zero_matrix", np.zeros((8, 5)), start(8), 3, "bfloat16")
    add("bf16_large_values_square", gaussian(12, 12, 30.0), start(12), 25, "bfloat16")
    add("bf16_wide", with_singular_values(5, 8, [4.0, 3.5, 1.0, 0.5, 0.25]), start(5), 3, "bfloat16")
    # Appended last, so the random draws of the cases above stay as they were.
    # Smaller still (norms ~1e-14 and ~1e-12, the constraints allow down to 1e-15): a zero guard such as
    # `norm > 1e-12` or `norm > 1e-10` (instead of `norm > 0`) zeroes the vectors whose norm is below it
    # (the 1e-12 guard is certain to fail on the 1e-14 matrices). Well-separated singular values (as for
    # tiny_values_tall), so honest orders of the products agree to a few ulp.
    add("tinier_values_tall", 1e-14 * with_singular_values(8, 5, [3.0, 1.5, 1.0, 0.6, 0.2]), start(8), 3)
    add("tinier_values_wide", 1e-14 * with_singular_values(5, 8, [4.0, 1.0, 0.5, 0.25, 0.1]), start(5), 3)
    add("tiny_1e-12_values_tall", 1e-12 * with_singular_values(8, 5, [3.0, 1.4, 0.9, 0.5, 0.3]), start(8), 3)
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
