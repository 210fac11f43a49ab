"""Write ``cases/hidden.json`` for integer-sqrt-newton (deterministic: the same bytes on every run).

Run it after every change: ``python problems/integer-sqrt-newton/generate_cases.py``. ``judge check``
fails when the file differs from what this script writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import render as render  # re-exported: the case check renders with it
from judge.casegen import write

SEED = 20_261_208
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"
MAX_N = 2**30


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, n: Any) -> None:
        values = [int(v) for v in np.asarray(n, dtype=np.int64).ravel()]
        cases.append({"name": name, "visibility": "hidden", "dtype": "float32", "args": {"n": values}})

    # The statement's examples again: three elements, one of them 0 or 1, other values.
    add("example_1_lookalike", [int(rng.integers(2, 1000)), int(rng.integers(2, 1000)), 1])
    add("example_2_lookalike", [int(rng.integers(1000, 10**6)), int(rng.integers(2, 50)), 0])
    # Small numbers, every one from 0 to 300: perfect squares and their neighbours.
    add("zero_to_three_hundred", np.arange(301))
    # The neighbours of large perfect squares, k^2 - 1, k^2, k^2 + 1: a float32 square root rounds
    # k^2 - 1 up to k^2 for k above 4,096 (24 bits), and misses the root by one.
    ks = rng.integers(4097, 32768, size=40)
    add("around_large_perfect_squares", np.concatenate([ks * ks - 1, ks * ks, ks * ks + 1]))
    # The bound itself, 2^30 = 32768^2, and the numbers just below it (the longest runs: 18 and 19 steps).
    add("at_the_bound", [MAX_N, MAX_N - 1, MAX_N - 2, 32767 * 32767, 32767 * 32767 - 1])
    # Mixed magnitudes in one array: counts from 0 to 19, so the loop runs long after most elements stop.
    add("mixed_magnitudes", np.concatenate([[0, 1, 2, 3], 10 ** rng.integers(1, 9, size=12), [MAX_N - 1]]))
    # One element; an empty array; the most elements allowed (random up to 2^30).
    add("one_large_element", [int(rng.integers(10**8, MAX_N))])
    add("empty", [])
    add("most_elements", rng.integers(0, MAX_N, size=4096, endpoint=True))
    # Only zeros and ones: the loop must not run at all (or run without changing anything).
    add("zeros_and_ones", [0, 1, 1, 0, 0, 1])
    # Powers of two up to 2^30 and the numbers one below them.
    powers = 2 ** np.arange(31)
    add("powers_of_two_and_below", np.concatenate([powers, powers[1:] - 1]))
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
