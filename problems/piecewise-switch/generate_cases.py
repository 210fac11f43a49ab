"""Write ``cases/hidden.json`` for piecewise-switch (deterministic: the same bytes on every run).

Run it after every change: ``python problems/piecewise-switch/generate_cases.py``. ``judge check`` fails
when the file differs from what this script writes. Values are exact in float32 (``judge.casegen``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_213
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, x: Any, mode: int) -> None:
        x = np.clip(np.asarray(x, dtype=np.float64), -1e4, 1e4)
        cases.append(
            {"name": name, "visibility": "hidden", "dtype": "float32", "args": {"x": f32(x), "mode": mode}}
        )

    def positive(shape: Any) -> np.ndarray:
        """Log-uniform from 1e-4 to 1e4 (float32 rounding kept above 1e-4)."""
        return np.maximum(10.0 ** rng.uniform(-4, 4, size=shape), 1.0001e-4)

    # The statement's examples again: the same shapes and modes, other values.
    add("example_1_lookalike", positive(3), 1)
    add("example_2_lookalike", rng.integers(-4, 5, size=(2, 2)) / 2, 0)
    add("example_3_lookalike", positive(2) * rng.choice([-1, 1], size=2), 3)
    # mode 0 with negatives and zeros: every other branch is undefined somewhere here.
    ident = rng.normal(size=(8, 16)) * 100
    ident[rng.random((8, 16)) < 0.2] = 0.0
    add("identity_with_negatives_and_zeros", ident, 0)
    add("identity_at_the_bound", [[1e4, -1e4, 0.0, 1.0], [-1.0, 0.5, -0.5, 2.0]], 0)
    # The same positive x under each mode, so that branches in another order are told apart.
    shared = positive((5, 7))
    for mode in range(4):
        add(f"same_x_mode_{mode}", shared, mode)
    # Square roots and logs from 1e-4 to 1e4; logs around 1 (results near 0).
    add("square_roots_of_every_scale", positive(64), 1)
    add("logs_of_every_scale", positive((4, 16)), 2)
    add("logs_near_one", 1.0 + rng.uniform(-0.01, 0.01, size=20), 2)
    # Reciprocals of both signs, magnitudes 1e-4 to 1e4.
    add("reciprocals_both_signs", positive((6, 9)) * rng.choice([-1, 1], size=(6, 9)), 3)
    # Nearly the most entries, 64 x 63 (4,032), under mode 1.
    add("most_entries_square_roots", positive((64, 63)), 1)
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
