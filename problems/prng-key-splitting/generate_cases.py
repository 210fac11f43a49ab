"""Write ``cases/hidden.json`` for prng-key-splitting (deterministic: same bytes on every run).

Run from anywhere: ``python problems/prng-key-splitting/generate_cases.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, key_from_seed, random_key_data, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_260_301
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"

#: (name, shape of x, scale of its values). The first two are the examples' shapes (with other keys);
#: the largest holds 4,000 entries and the widest values reach the bound of 100.
SHAPES: list[tuple[str, tuple[int, ...], float]] = [
    ("like_example_1", (4,), 2.0),
    ("like_example_2", (2, 3), 5.0),
    ("single", (1,), 1.0),
    ("row", (1, 17), 1.0),
    ("column", (9, 1), 3.0),
    ("vector", (257,), 30.0),
    ("matrix", (16, 32), 1.0),
    ("largest", (50, 80), 100.0),
]


def _x(rng: np.random.Generator, shape: tuple[int, ...], scale: float) -> Any:
    values = np.clip(rng.normal(size=shape) * scale / 2.5, -scale, scale)
    if scale == 100.0:  # reach the stated bound exactly, at both signs
        values.flat[0], values.flat[-1] = 100.0, -100.0
    return f32(values)


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    keys: list[tuple[str, dict[str, Any]]] = [
        ("seed_0", key_from_seed(0)),
        ("seed_42", key_from_seed(42)),
        ("seed_max", key_from_seed(2**32 - 1)),
        ("data_max", {"key_data": [4294967295, 4294967295]}),
    ]
    cases: list[dict[str, Any]] = []
    for i, (label, shape, scale) in enumerate(SHAPES):
        # Two keys per shape: a fixed one in turn and a random raw key, so every shape sees two keys.
        for key_name, key in (keys[i % len(keys)], ("random_data", random_key_data(rng))):
            cases.append(
                {
                    "name": f"{label}_{key_name}",
                    "visibility": "hidden",
                    "dtype": "float32",
                    "args": {"key": key, "x": _x(rng, shape, scale)},
                }
            )
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
