"""Write ``cases/hidden.json`` for remat-tanh-stack (deterministic: the same bytes on every run).

Run it after every change: ``python problems/remat-tanh-stack/generate_cases.py``. ``judge check`` fails
when the file differs from what this script writes. Values are exact in float32 (``judge.casegen``), so
the judge sees exactly these inputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_206
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"
MAX_ABS = 4.0


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, layers: int, rows: int, features: int, gain: float = 1.5, spread: float = 1.0) -> None:
        # Weights scaled by 1/sqrt(d), so that activations neither vanish nor all saturate.
        ws = rng.normal(size=(layers, features, features)) * gain / np.sqrt(features)
        x = rng.normal(size=(rows, features)) * spread
        args = {"ws": f32(np.clip(ws, -MAX_ABS, MAX_ABS)), "x": f32(np.clip(x, -MAX_ABS, MAX_ABS))}
        cases.append({"name": name, "visibility": "hidden", "dtype": "float32", "args": args})

    # The statement's examples again: the same shapes, other values.
    add("example_1_lookalike", 1, 1, 2)
    add("example_2_lookalike", 2, 2, 2)
    # The deepest stack the constraints allow: 16 layers of 8 features.
    add("sixteen_layers", 16, 8, 8)
    # The widest: 32 rows of 32 features, 3 layers (not square in layers and rows).
    add("thirty_two_rows_and_features", 3, 32, 32)
    # One feature: every "matrix" product is a product of numbers.
    add("one_feature", 5, 4, 1)
    # Rows and features differ, so a product taken the other way round has the wrong shape.
    add("three_rows_five_features", 4, 3, 5)
    # A single row through 16 layers of 15 features.
    add("one_row_deep", 16, 1, 15)
    # Large weights and inputs: most units saturate near +-1 and their derivative is near 0.
    add("saturated_units", 6, 6, 6, gain=6.0, spread=3.0)
    # Small weights: every layer is nearly linear (tanh z ~ z) and activations shrink layer by layer.
    add("small_weights", 8, 5, 7, gain=0.5, spread=0.5)
    # Entries at the stated bound, 4 and -4, in both arguments.
    layers, rows, features = 4, 3, 3
    ws = rng.choice([-MAX_ABS, MAX_ABS, 0.5, -0.25], size=(layers, features, features))
    x = rng.choice([-MAX_ABS, MAX_ABS, 0.125], size=(rows, features))
    cases.append(
        {
            "name": "entries_at_the_bound",
            "visibility": "hidden",
            "dtype": "float32",
            "args": {"ws": f32(ws), "x": f32(x)},
        }
    )
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
