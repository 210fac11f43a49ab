"""Write ``cases/hidden.json`` for linear-recurrence-scan (deterministic: the same bytes on every run).

Run it after every change: ``python problems/linear-recurrence-scan/generate_cases.py``. ``judge check``
fails when the file differs from what this script writes. Values are exact in float32.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_212
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, a: Any, b: Any) -> None:
        a = np.clip(np.asarray(a, dtype=np.float64), -1.0, 1.0)
        b = np.clip(np.asarray(b, dtype=np.float64), -1000.0, 1000.0)
        cases.append(
            {"name": name, "visibility": "hidden", "dtype": "float32", "args": {"a": f32(a), "b": f32(b)}}
        )

    # The statement's examples again: the same shapes, other values.
    add("example_1_lookalike", rng.uniform(-1, 1, size=3), rng.normal(size=3) * 3)
    add("example_2_lookalike", rng.uniform(-1, 1, size=(3, 2)), rng.normal(size=(3, 2)) * 3)
    add("example_3_lookalike", rng.uniform(-1, 1, size=1), rng.normal(size=1) * 3)
    # 128 steps early in the file: an unrolled Python loop breaks the bound on steps here, against the
    # examples' programs, before the longest case (whose unrolled program takes long to compile).
    add("one_hundred_twenty_eight_steps", rng.uniform(-1, 1, size=128), rng.normal(size=128))
    add("ninety_six_steps_of_two", rng.uniform(-1, 1, size=(96, 2)), rng.normal(size=(96, 2)))
    # The longest sequence, 1,024 steps with a = 1: a running sum of values up to 1000.
    add("running_sum_1024_steps", np.ones(1024), rng.uniform(-1000, 1000, size=1024))
    # Slow decay over 256 steps of 8 recurrences.
    add("slow_decay", rng.uniform(0.9, 1.0, size=(256, 8)), rng.normal(size=(256, 8)))
    # Zeros in a: each resets its recurrence, and a cumulative product through it is 0.
    zeros = rng.uniform(-1, 1, size=(64, 4))
    zeros[rng.random((64, 4)) < 0.2] = 0.0
    add("zeros_in_a", zeros, rng.normal(size=(64, 4)) * 10)
    # Negative a: the state flips sign every step.
    add("negative_a", -rng.uniform(0.5, 1.0, size=(100, 3)), rng.normal(size=(100, 3)))
    # b at the bound +-1000, a near 1: large states.
    add("large_b", rng.uniform(0.95, 1.0, size=512), rng.choice([-1000.0, 1000.0, 999.5], size=512))
    # The widest, 64 recurrences over 32 steps.
    add("widest", rng.uniform(-1, 1, size=(32, 64)), rng.normal(size=(32, 64)))
    # Tiny a: each state is nearly its own b (a small a_t * h_{t-1} on top).
    add("tiny_a", rng.uniform(-1e-3, 1e-3, size=(16, 5)), rng.normal(size=(16, 5)))
    # Lengths 2 and 8 (1-D): with the rest, the programs for many lengths are compared.
    add("two_steps", rng.uniform(-1, 1, size=2), rng.normal(size=2))
    add("eight_steps", rng.uniform(-1, 1, size=8), rng.normal(size=8))
    # One recurrence as a 2-D (T, 1) array: the statement's d = 1, kept 2-D in the output.
    add("one_wide_column", rng.uniform(-1, 1, size=(20, 1)), rng.normal(size=(20, 1)))
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
