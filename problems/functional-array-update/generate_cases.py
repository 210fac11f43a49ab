"""Write ``cases/hidden.json`` for functional-array-update (deterministic: same bytes on every run).

Run from anywhere: ``python problems/functional-array-update/generate_cases.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_260_302
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"
#: validator.py's bound on every value.
MAX_ABS = 1000.0

#: (name, shape of x, entries of set_idx, entries of add_idx, scale of the values). The first two are the
#: examples' shapes; the last ones reach 64 rows, 64 indices and values of magnitude 1,000.
CONFIGS: list[tuple[str, tuple[int, ...], int, int, float]] = [
    ("like_example_1", (4,), 2, 3, 4.0),
    ("like_example_2", (3, 2), 2, 2, 10.0),
    ("one_row", (1, 3), 2, 4, 1.0),
    ("vector", (10,), 5, 12, 50.0),
    ("matrix", (8, 5), 6, 9, 3.0),
    ("wide", (5, 64), 3, 4, 1.0),
    ("many_indices", (64,), 64, 64, 1000.0),
    ("tall", (64, 8), 20, 40, 100.0),
]
#: (name, shape of x, entries of set_idx, entries of add_idx): x near +-1,000 overwritten by rows below
#: 0.01 (and small additions), so a set written as old + (new - old) keeps the rounding of new - old at the
#: size of the old value, many times the tolerance of the small new one.
OVERWRITES: list[tuple[str, tuple[int, ...], int, int]] = [
    ("large_overwritten_by_small", (16, 4), 8, 6),
    ("large_vector_overwritten_by_small", (32,), 20, 10),
]


def _special(n: int) -> list[int]:
    """Indices that tell the index rules apart: both ends of the range, just out of range on each side,
    the last row by its negative index, a negative in-range one."""
    return sorted({-2 * n, -n - 1, -n, -1, n, 2 * n - 1, 0})


def _set_indices(rng: np.random.Generator, n: int, k: int, special: bool) -> list[int]:
    """k indices whose in-range entries name distinct rows; a few out of range, some negative."""
    out: list[int] = []
    used: set[int] = set()
    pool = _special(n) if special else []
    candidates = pool + [int(v) for v in rng.integers(-2 * n, 2 * n, size=8 * k + 16)]
    for value in candidates:
        if len(out) == k:
            break
        row = value + n if value < 0 else value
        if 0 <= row < n:
            if row in used:
                continue
            used.add(row)
        out.append(value)
    while len(out) < k:  # every row already named: fill with out-of-range indices
        out.append(int(rng.choice([n + int(rng.integers(0, n)), -2 * n + int(rng.integers(0, n))])))
    rng.shuffle(out)
    return out


def _add_indices(rng: np.random.Generator, n: int, m: int, set_idx: list[int], special: bool) -> list[int]:
    """m indices with repeats (a row added to several times), one row also set, some out of range."""
    base = (_special(n) if special else []) + [set_idx[0]]
    repeat = int(rng.integers(-n, n))
    out = [*base, repeat, repeat, repeat]
    out += [int(v) for v in rng.integers(-2 * n, 2 * n, size=m)]
    out = out[:m]
    rng.shuffle(out)
    return out


def _values(rng: np.random.Generator, shape: tuple[int, ...], scale: float) -> Any:
    values = np.clip(rng.normal(size=shape) * scale / 2.5, -scale, scale)
    if scale == 1000.0 and values.size >= 2:
        values.flat[0], values.flat[-1] = 1000.0, -1000.0
    return f32(values)


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []
    for name, shape, k, m, scale in CONFIGS:
        n = shape[0]
        for variant, special in (("edges", True), ("random", False)):
            set_idx = _set_indices(rng, n, k, special)
            add_idx = _add_indices(rng, n, m, set_idx, special)
            args = {
                "x": _values(rng, shape, scale),
                "set_idx": set_idx,
                "set_rows": _values(rng, (k, *shape[1:]), scale),
                "add_idx": add_idx,
                "add_rows": _values(rng, (m, *shape[1:]), scale),
            }
            cases.append(
                {"name": f"{name}_{variant}", "visibility": "hidden", "dtype": "float32", "args": args}
            )
    for name, shape, k, m in OVERWRITES:
        n = shape[0]
        for variant, special in (("edges", True), ("random", False)):
            set_idx = _set_indices(rng, n, k, special)
            add_idx = _add_indices(rng, n, m, set_idx, special)
            sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
            args = {
                "x": f32(sign * rng.uniform(500.0, MAX_ABS, size=shape)),
                "set_idx": set_idx,
                "set_rows": f32(rng.normal(size=(k, *shape[1:])) * 0.004),
                "add_idx": add_idx,
                "add_rows": f32(rng.normal(size=(m, *shape[1:])) * 0.004),
            }
            cases.append(
                {"name": f"{name}_{variant}", "visibility": "hidden", "dtype": "float32", "args": args}
            )
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
