"""Write ``cases/hidden.json`` for kv-cache-update (deterministic: the same bytes on every run).

Run from anywhere: ``python problems/kv-cache-update/generate_cases.py``. Values are exact float32 numbers
(``judge.casegen.f32``). Every cache row holds values other than the new token's, so a solution that adds
instead of writing, writes the wrong row or swaps the caches is seen; positions include the first and the
last row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_260_226
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"

#: (label, max_len, heads, head_dim, scale of the values, positions). The first shape is the examples'.
SHAPES: list[tuple[str, int, int, int, float, list[int | str]]] = [
    ("example_shape", 32, 1, 2, 4.0, [0, 5, 30, "last"]),
    ("two_heads", 32, 2, 4, 2.0, [0, 1, 16, "last"]),
    ("medium", 60, 4, 8, 1.0, [0, 31, 58, "last"]),
    ("odd_sizes", 48, 3, 6, 8.0, [0, 7, 46, "last"]),
    ("long_wide", 120, 1, 16, 1.0, [0, 64, 118, "last"]),
    # Near the stated bound on magnitudes (10^4).
    ("large_values", 64, 2, 8, 9.0e3, [0, 33, "last"]),
]
#: (label, max_len, heads, head_dim, scale of the cache, scale of the new token, positions): a cache near
#: the bound overwritten by a token 10^6 times smaller, so a write as old + (new - old) keeps the rounding
#: of new - old at the size of the old row, many times the tolerance of the small new value.
OVERWRITES: list[tuple[str, int, int, int, float, float, list[int | str]]] = [
    ("large_row_overwritten_by_small", 64, 2, 8, 9.0e3, 1.0e-2, [3, 40, "last"]),
]


def _values(rng: np.random.Generator, shape: tuple[int, ...], scale: float) -> Any:
    """Random values of ``shape`` with magnitudes up to ``scale``, none zero."""
    magnitude = rng.uniform(0.25, 1.0, size=shape) * scale
    return f32(np.where(rng.random(shape) < 0.5, -magnitude, magnitude))


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []
    for label, length, heads, dim, scale, positions in SHAPES:
        for pos in positions:
            row = length - 1 if pos == "last" else int(pos)
            args = {
                "k_cache": _values(rng, (length, heads, dim), scale),
                "v_cache": _values(rng, (length, heads, dim), scale),
                "k_new": _values(rng, (heads, dim), scale),
                "v_new": _values(rng, (heads, dim), scale),
                "pos": row,
            }
            name = f"{label}_pos_{row}"
            cases.append({"name": name, "visibility": "hidden", "dtype": "float32", "args": args})
    for label, length, heads, dim, scale, new_scale, positions in OVERWRITES:
        for pos in positions:
            row = length - 1 if pos == "last" else int(pos)
            args = {
                "k_cache": _values(rng, (length, heads, dim), scale),
                "v_cache": _values(rng, (length, heads, dim), scale),
                "k_new": _values(rng, (heads, dim), new_scale),
                "v_new": _values(rng, (heads, dim), new_scale),
                "pos": row,
            }
            name = f"{label}_pos_{row}"
            cases.append({"name": name, "visibility": "hidden", "dtype": "float32", "args": args})
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
