"""Write ``cases/hidden.json`` for safe-norm-jvp (deterministic: the same bytes on every run).

Run it after every change: ``python problems/safe-norm-jvp/generate_cases.py``. ``judge check`` fails when
the file differs from what this script writes. Values are exact in float32 (``judge.casegen``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_209
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, x: Any) -> None:
        cases.append({"name": name, "visibility": "hidden", "dtype": "float32", "args": {"x": f32(x)}})

    def zero_rows(x: np.ndarray, share: float) -> np.ndarray:
        keep = rng.random(x.shape[:-1]) >= share
        return x * keep[..., None]

    # The statement's examples again: the same shapes, other values (a zero row, large values, a last
    # axis of 1 with a zero).
    add("example_1_lookalike", np.array([rng.normal(size=2) * 3, [0.0, 0.0]]))
    add("example_2_lookalike", rng.uniform(0.5, 1.0, size=4) * 2.0**100 * rng.choice([-1, 1], size=4))
    add("example_3_lookalike", np.array([[[rng.normal() * 5]], [[0.0]]]))
    # Rows of 8 with a third of them zero.
    add("zero_rows_among_others", zero_rows(rng.normal(size=(12, 8)), 0.33))
    # Values near the largest magnitude: the sum of squares overflows unless scaled.
    add("huge_values", rng.uniform(0.1, 1.0, size=(3, 64)) * 2.0**100 * rng.choice([-1, 1], size=(3, 64)))
    # Values near the smallest magnitude: the squares underflow to zero unless scaled.
    add("tiny_values", rng.uniform(1.0, 10.0, size=(5, 8)) * 2.0**-100 * rng.choice([-1, 1], size=(5, 8)))
    # Rows of very different scales in one array, from 1e-25 to 1e25.
    scales = 10.0 ** np.arange(-25, 26, 5)
    add("rows_of_every_scale", rng.normal(size=(scales.size, 6)) * scales[:, None])
    # A huge and a tiny entry in one slice: the tiny one vanishes next to it, its gradient too.
    add("huge_beside_tiny", np.array([[1e30, 1e-30, 0.0], [-1e-30, 0.0, 3e29], [2e-30, 1e-30, 0.0]]))
    # 3-D with zero slices.
    add("three_d_zero_slices", zero_rows(rng.normal(size=(4, 3, 5)), 0.4))
    # A last axis of 1: the absolute value and the sign, with zeros and negatives.
    add("absolute_values", zero_rows(rng.normal(size=(16, 1)) * 4, 0.25))
    # Slices with a single nonzero entry: the norm is its magnitude and the gradient its sign.
    onehot = np.eye(6)[rng.integers(0, 6, size=10)] * rng.normal(size=(10, 1)) * 100
    add("one_nonzero_per_slice", onehot)
    # A 1-D slice of zeros: a 0-d norm of 0 and a zero gradient.
    add("one_zero_vector", np.zeros(7))
    # The most entries allowed, 64 slices of 64, two of them zero.
    big = rng.normal(size=(64, 64))
    big[[5, 40]] = 0.0
    add("most_entries", big)
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
