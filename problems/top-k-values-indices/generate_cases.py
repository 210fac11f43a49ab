"""Write ``cases/hidden.json`` for top-k-values-indices (deterministic: the same bytes on every run).

Run it after every change: ``python problems/top-k-values-indices/generate_cases.py``. ``judge check``
fails when the file differs from what this script writes. Values are exact in float32
(``judge.casegen``); no case holds -0.0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_211
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, x: Any, k: int) -> None:
        x = np.asarray(x, dtype=np.float64) + 0.0  # + 0.0 turns any -0.0 into 0.0
        cases.append(
            {"name": name, "visibility": "hidden", "dtype": "float32", "args": {"x": f32(x), "k": k}}
        )

    # The statement's examples again: the same shapes and k, other values.
    add("example_1_lookalike", rng.integers(-9, 10, size=5), 3)
    add("example_2_lookalike", rng.integers(-3, 4, size=(2, 4)), 2)
    add("example_3_lookalike", rng.normal(size=(2, 1)) * 4, 1)
    # Ties everywhere: entries from {0, 1, 2, 3}, so every row's top 5 has equal entries.
    add("ties_everywhere", rng.integers(0, 4, size=(8, 16)), 5)
    # Whole rows of equal entries, k the row's length: indices 0, 1, ..., 9 in order.
    add("rows_of_equal_entries", np.repeat(rng.normal(size=(4, 1)), 10, axis=1), 10)
    # k equal to the row's length: a full descending sort with ties.
    add("k_is_the_row", rng.integers(-5, 6, size=(6, 12)), 12)
    # A tie at the k-th place: three equal entries compete for the last two places.
    add("tie_at_the_kth_place", [[5.0, 3.0, 1.0, 3.0, 3.0, -2.0], [3.0, 0.5, 3.0, 9.0, 3.0, 3.0]], 3)
    # Magnitudes up to 1e30 with both signs.
    add("large_magnitudes", rng.uniform(-1, 1, size=(3, 64)) * 1e30, 8)
    # Only negative entries: a result built from a zero-initialised buffer shows zeros.
    add("only_negative", -rng.uniform(1, 100, size=(5, 7)), 3)
    # The longest row allowed, 512 entries (a 1-D x), top 20.
    add("longest_row", rng.normal(size=512) * 10, 20)
    # Rows of one entry.
    add("rows_of_one", rng.normal(size=(16, 1)), 1)
    # 8 rows of 500 (4,000 entries), top 1: the row maximum and its first position.
    most = rng.integers(0, 50, size=(8, 500)).astype(np.float64)
    add("most_entries_top_one", most, 1)
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
