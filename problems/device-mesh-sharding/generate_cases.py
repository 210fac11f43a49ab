"""Write ``cases/hidden.json`` for device-mesh-sharding (deterministic: the same bytes on every run).

Run from anywhere: ``python problems/device-mesh-sharding/generate_cases.py``. Values are multiples of
1/32 below 16 in magnitude, a quarter of them with odd numerators over 256 (not bfloat16 numbers, so a
product taken in bfloat16 is seen), and every sum of products is exact in float32 (at most 2^24 in units
of 1/1024), so the reference's float32 matmul is the exact one. Each row's maximum lies in a random
column, often in the second half (the columns the second `model` device holds). Every shape has two
cases; the first two shapes are the examples'. Two more cases hold integers near the bound 100.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_260_426
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"

#: (label, b, d, h). b == h for two shapes, so a maximum over the wrong axis has the right shape there.
SHAPES: list[tuple[str, int, int, int]] = [
    ("example_1_shape", 4, 2, 2),
    ("example_2_shape", 8, 3, 4),
    ("smallest", 4, 1, 2),
    ("uneven_blocks", 12, 5, 6),
    ("square_output", 16, 16, 16),
    ("tall_narrow", 64, 4, 2),
    ("short_wide", 4, 16, 64),
    ("odd_inner", 20, 7, 10),
    ("square_deep", 8, 32, 8),
    ("largest", 64, 32, 64),
]


def _values(rng: np.random.Generator, shape: tuple[int, ...]) -> Any:
    """Multiples of 1/32 with magnitudes below 16, numerators drawn from 1 to 511 (the odd ones over 256,
    a quarter of them, are not bfloat16 numbers), random signs."""
    numerators = rng.integers(1, 512, size=shape)
    signs = np.where(rng.random(shape) < 0.5, -1, 1)
    return f32(signs * numerators / 32.0)


def _large(rng: np.random.Generator, shape: tuple[int, ...]) -> Any:
    """Integers of magnitude 60 to 100 (the stated bound), random signs."""
    magnitudes = rng.integers(60, 101, size=shape)
    return f32(np.where(rng.random(shape) < 0.5, -magnitudes, magnitudes).astype(np.float64))


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, x: Any, w: Any) -> None:
        cases.append({"name": name, "visibility": "hidden", "dtype": "float32", "args": {"x": x, "w": w}})

    for label, b, d, h in SHAPES:
        for index in (1, 2):
            add(f"{label}_{index}", _values(rng, (b, d)), _values(rng, (d, h)))
    # Values near the bound 100 (integers, so the sums stay exact), in two shapes used above.
    add("large_values_square", _large(rng, (16, 16)), _large(rng, (16, 16)))
    add("large_values_uneven", _large(rng, (12, 5)), _large(rng, (5, 6)))
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
