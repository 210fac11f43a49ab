"""Write ``cases/hidden.json`` for matrix-power-loop (deterministic: the same bytes on every run).

Run it after every change: ``python problems/matrix-power-loop/generate_cases.py``. ``judge check`` fails
when the file differs from what this script writes. Values are exact in float32 (``judge.casegen``), so
the judge sees exactly these inputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_207
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"


def _scaled(a: np.ndarray, row_sum: float) -> np.ndarray:
    """``a`` scaled so that its largest row sum of absolute values is ``row_sum``, rounded to float32 and
    then scaled down by an ulp where rounding pushed a row past 1."""
    a = a / np.abs(a).sum(axis=1).max() * row_sum
    a32 = a.astype(np.float32)
    while np.abs(a32.astype(np.float64)).sum(axis=1).max() > 1.0:
        a32 = (a32 * np.float32(0.9999999)).astype(np.float32)
    return a32.astype(np.float64)


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, a: Any, k: int) -> None:
        cases.append(
            {"name": name, "visibility": "hidden", "dtype": "float32", "args": {"a": f32(a), "k": k}}
        )

    # The statement's examples again: the same shapes and k, other values.
    add("example_1_lookalike", _scaled(np.triu(rng.normal(size=(2, 2))), 0.9), 3)
    add("example_2_lookalike", _scaled(rng.normal(size=(2, 2)), 1.0), 2)
    add("example_3_lookalike", _scaled(rng.normal(size=(1, 1)), 0.7), 5)
    # A 16-state Markov chain (rows sum to 1) advanced 64 steps, the most allowed.
    # Each row: 16 sixteenths spread over the states (exact in float32, summing to exactly 1).
    stochastic = np.zeros((16, 16))
    for row in stochastic:
        np.add.at(row, rng.integers(0, 16, size=16), 1.0 / 16)
    add("markov_chain_64_steps", stochastic, 64)
    # A signed permutation of 8 (entries 0 and +-1): every power is one, exactly.
    perm = np.eye(8)[rng.permutation(8)] * rng.choice([-1.0, 1.0], size=(8, 1))
    add("signed_permutation_61_steps", perm, 61)
    # k = 1 returns a (a 6x6, and the largest size).
    add("power_one", _scaled(rng.normal(size=(6, 6)), 0.95), 1)
    add("power_one_16", _scaled(rng.normal(size=(16, 16)), 1.0), 1)
    # Not symmetric: a^T's powers differ; starting from a instead of I gives a^(k+1).
    add(
        "nonsymmetric_17_steps",
        _scaled(rng.normal(size=(5, 5)) + np.diag([2.0, 1.5, -2.0, 1.0, 0.5]), 0.99),
        17,
    )
    # A strictly upper triangular 6x6 is nilpotent: a^5 is its last nonzero power.
    add("nilpotent_5_steps", _scaled(np.triu(rng.uniform(0.5, 1.0, size=(6, 6)), 1), 1.0), 5)
    # Random 16x16 with both signs over 32 steps; a rotation-like 3x3 over 40 steps (oscillating signs).
    add("random_16_by_16_32_steps", _scaled(rng.normal(size=(16, 16)), 1.0), 32)
    theta = 0.7
    rotation = np.array(
        [[np.cos(theta), -np.sin(theta), 0.0], [np.sin(theta), np.cos(theta), 0.0], [0, 0, 1]]
    )
    add("rotation_40_steps", _scaled(rotation, 0.999), 40)
    # A single entry of -1 to the 63rd power: -1 (an odd count), and 2 steps of a 4x4.
    add("minus_one_63_steps", np.array([[-1.0]]), 63)
    add("two_steps_4_by_4", _scaled(rng.normal(size=(4, 4)), 0.9), 2)
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
