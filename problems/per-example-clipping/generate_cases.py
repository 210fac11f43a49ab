"""Write ``cases/hidden.json`` for per-example-clipping (deterministic: the same bytes on every run).

Run it after every change: ``python problems/per-example-clipping/generate_cases.py``. ``judge check``
fails when the file differs from what this script writes. Values are exact in the case dtype
(``judge.casegen``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import bf16, f32, num, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_201
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, w: Any, x: Any, y: Any, max_norm: float, dtype: str = "float32") -> None:
        cast = bf16 if dtype == "bfloat16" else f32
        args = {
            "w": cast(np.asarray(w).tolist()),
            "x": cast(np.asarray(x).tolist()),
            "y": cast(np.asarray(y).tolist()),
            "max_norm": num(max_norm),
        }
        cases.append({"name": name, "visibility": "hidden", "dtype": dtype, "args": args})

    def batch(size: int, dim: int, scale: float = 1.0) -> tuple[Any, Any, Any]:
        return (
            scale * rng.standard_normal(dim),
            scale * rng.standard_normal((size, dim)),
            rng.standard_normal(size),
        )

    def with_fitted(size: int, dim: int, fitted: int) -> tuple[Any, Any, Any]:
        """Small integers; ``fitted`` examples (shuffled in) have y = x . w exactly: zero gradients."""
        w = rng.integers(-3, 4, size=dim).astype(float)
        x = rng.integers(-3, 4, size=(size, dim)).astype(float)
        y = rng.integers(-5, 6, size=size).astype(float)
        y[:fitted] = x[:fitted] @ w
        order = rng.permutation(size)
        return w, x[order], y[order]

    # The examples' shapes again, with other values.
    add("example_1_lookalike", *with_fitted(3, 2, 1), 1.5)
    add("example_2_lookalike", *batch(2, 1), 0.7)
    # Some examples fitted exactly: their gradient is 0 and must stay 0 (dividing by the norm gives nan).
    add("fitted_examples", *with_fitted(8, 4, 3), 2.0)
    add("fitted_examples_wide", *with_fitted(16, 12, 5), 5.0)
    # Mixed: some gradients above max_norm, some below (clipping the mean, or 2x the loss, differ here).
    add("mixed_clipping", *batch(10, 5), 1.0)
    add("mixed_clipping_large_batch", *batch(64, 16), 2.0)
    # Every gradient clipped (a tiny max_norm), and none clipped (a large one).
    add("all_clipped", *batch(12, 6, 3.0), 0.01)
    add("none_clipped", *batch(9, 3, 0.3), 1000.0)
    # One example; one weight; large magnitudes.
    add("single_example", *batch(1, 7), 0.5)
    add("one_weight_many_examples", *batch(40, 1), 0.8)
    add("large_values", *batch(20, 8, 50.0), 300.0)
    add("largest_batch", *batch(256, 8), 1.0)

    # Values near the stated bound 1e4 and the largest max_norm (gradients near 1e12; the shapes of
    # large_values and bf16_mixed_clipping, so no new compile signature).
    def near_bound(size: int, dim: int) -> tuple[Any, ...]:
        return tuple(np.clip(a * 3e3, -1e4, 1e4) for a in batch(size, dim))

    add("values_near_the_bound", *near_bound(20, 8), 1e4)
    add("bf16_values_near_the_bound", *near_bound(32, 24), 1e4, "bfloat16")
    # bfloat16: computed in float32, cast back.
    add("bf16_example_1_shape", *with_fitted(3, 2, 1), 1.5, "bfloat16")
    add("bf16_fitted_examples", *with_fitted(8, 4, 3), 2.0, "bfloat16")
    add("bf16_mixed_clipping", *batch(32, 24), 1.0, "bfloat16")

    def cancelling(size: int, dim: int) -> tuple[Any, Any, Any]:
        """x . w close to y: one large coordinate, the others 1 + k/128 (exact in bfloat16), y = x . w
        rounded to bfloat16. In float32 the residual is a small exact difference; taken in bfloat16 (no
        upcast) x . w rounds first and the residual, hence every gradient, is far off."""
        w = rng.choice([-2.0, -1.0, 1.0, 2.0], size=dim)
        x = 1.0 + rng.integers(1, 64, size=(size, dim)) / 128.0
        x *= rng.choice([-1.0, 1.0], size=(size, dim))
        x[:, 0] = rng.integers(50, 200, size=size) * rng.choice([-1.0, 1.0], size=size)
        y = np.asarray(bf16((x @ w).tolist()))
        return w, x, y

    # Shapes of the other bfloat16 cases (3 x 2, 8 x 4), so no new compile signature.
    # The residual cancels: a gradient computed in bfloat16 without the float32 upcast is far off.
    add(
        "bf16_cancelling_residual",
        [1.0, 1.0],
        [[100.0, 1.0078125], [200.0, 3.015625], [-50.0, 0.5078125]],
        [101.0, 203.0, -49.5],
        1000.0,
        "bfloat16",
    )
    add("bf16_cancelling_residual_wide", *cancelling(8, 4), 1000.0, "bfloat16")
    # Tiny gradients (norms ~1e-8 and ~1e-6) and a tinier max_norm: max_norm / (norm + eps) with a small
    # eps such as 1e-6 (instead of max_norm / norm) scales them far below max_norm. In bfloat16 only: the
    # float32 tolerance's atol of 1e-6 accepts any output this small.
    add(
        "bf16_tiny_gradients",
        [1.0, 1.0],
        [[2.0**-13, 0.0], [0.0, 2.0**-12], [2.0**-12, -(2.0**-13)]],
        [0.0, 0.0, 0.0],
        1e-9,
        "bfloat16",
    )
    w, x, y = batch(8, 4, 1e-2)
    add("bf16_tiny_gradients_batch", w, x, 1e-4 * y, 1e-9, "bfloat16")
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
