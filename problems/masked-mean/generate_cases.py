"""Write ``cases/hidden.json`` for masked-mean (deterministic: the same bytes on every run).

Run it after every change: ``python problems/masked-mean/generate_cases.py``. ``judge check`` fails when the
file differs from what this script writes. Values are exact in the case dtype (``judge.casegen``), so the
judge sees exactly these inputs.

Values are normal draws around a positive offset, so a row's mean is seldom near zero and the float32 sum's
own rounding stays far inside the tolerance; rows with no selected entry hold ordinary values, so falling
back to the unmasked mean there is caught; square 2-D cases make reducing the first axis instead of the last
give the right shape with wrong values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import bf16, f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_250_726
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"
#: validator.py's bounds: the largest magnitude of an entry and the most entries x may hold.
MAX_ABS = 1e30
MAX_ELEMENTS = 2048
#: Values near the bound stay below 0.99 * MAX_ABS: 1e30 itself rounds above 1e30 in float32 and bfloat16.
NEAR_MAX = 0.99 * MAX_ABS


def _values(rng: np.random.Generator, shape: tuple[int, ...], scale: float = 1.0) -> Any:
    return rng.normal(loc=1.5, scale=1.0, size=shape) * scale


def _mask(
    rng: np.random.Generator, shape: tuple[int, ...], p: float, empty: int = 0, full: int = 0
) -> np.ndarray[Any, Any]:
    """A random mask (each entry True with probability ``p``) whose first ``empty`` rows (of the last axis)
    select nothing and the next ``full`` rows everything; rows are then shuffled."""
    mask = rng.random(shape) < p
    rows = mask.reshape(-1, shape[-1])
    rows[:empty] = False
    rows[empty : empty + full] = True
    rng.shuffle(rows)
    return rows.reshape(shape)


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, x: Any, mask: Any, dtype: str = "float32") -> None:
        cast = bf16 if dtype == "bfloat16" else f32
        mask = np.asarray(mask, dtype=bool)
        assert np.shape(x) == mask.shape, name
        cases.append(
            {
                "name": name,
                "visibility": "hidden",
                "dtype": dtype,
                "args": {"x": cast(np.asarray(x)), "mask": mask.tolist()},
            }
        )

    # The statement's examples again (shapes and dtype) with other values, so a submission that returns the
    # published output whenever it recognises an example's shapes fails.
    add("example_1_lookalike", [-2.0, 5.0, 0.5, 8.0], [False, True, True, False])
    add(
        "example_2_lookalike",
        [[1.0, -1.0, 7.0], [3.0, 6.0, 9.0], [2.5, 2.5, -4.0]],
        [[True, True, True], [False, False, False], [True, False, False]],
    )
    add(
        "example_3_lookalike",
        [[[0.5, 1.5, 2.5, 3.5]], [[-8.0, 4.0, 6.0, 2.0]]],
        [[[False, True, False, True]], [[True, True, True, False]]],
    )
    # A 1-D row that selects nothing gives 0 (not NaN, not the plain mean); one that selects everything
    # gives the plain mean.
    add("one_row_nothing_selected", [3.0, -1.0, 4.0, 1.5], [False] * 4)
    add("one_row_everything_selected", [3.0, -1.0, 4.0, 1.5], [True] * 4)
    # Square 2-D cases: the first axis has the length of the last, so its means have the right shape.
    add("square_two_empty_rows", _values(rng, (3, 3)), _mask(rng, (3, 3), 0.5, empty=2))
    add("square_8x8", _values(rng, (8, 8)), _mask(rng, (8, 8), 0.4, empty=2, full=1))
    add("square_8x8_dense", _values(rng, (8, 8), 4.0), _mask(rng, (8, 8), 0.85, empty=1, full=3))
    add("wide_5x7", _values(rng, (5, 7)), _mask(rng, (5, 7), 0.3, empty=1, full=1))
    add("three_d_4x5x6", _values(rng, (4, 5, 6)), _mask(rng, (4, 5, 6), 0.5, empty=4, full=2))
    add("three_d_4x5x6_sparse", _values(rng, (4, 5, 6), 0.01), _mask(rng, (4, 5, 6), 0.1, empty=3))
    # One entry, not selected, then selected.
    add("single_entry_not_selected", [[[7.25]]], [[[False]]])
    add("single_entry_selected", [[[-7.25]]], [[[True]]])
    # A whole row of 2048 entries (the most x may hold): most selected, then only three.
    add("long_row_dense", _values(rng, (MAX_ELEMENTS,)), _mask(rng, (MAX_ELEMENTS,), 0.7))
    sparse = np.zeros(MAX_ELEMENTS, dtype=bool)
    sparse[rng.choice(MAX_ELEMENTS, size=3, replace=False)] = True
    add("long_row_three_selected", _values(rng, (MAX_ELEMENTS,), 100.0), sparse)
    # Entries near the stated bound 1e30 (a whole row sums to far less than float32's largest value).
    near = np.clip(_values(rng, (8, 8), MAX_ABS / 3), -NEAR_MAX, NEAR_MAX)
    add("values_near_the_bound", near, _mask(rng, (8, 8), 0.6, empty=1, full=2))
    add("tiny_values", _values(rng, (5, 7), 1e-20), _mask(rng, (5, 7), 0.5, empty=1))

    # bfloat16 cases: the result keeps x's dtype.
    add("bf16_square_16x16", _values(rng, (16, 16)), _mask(rng, (16, 16), 0.5, empty=3, full=2), "bfloat16")
    add("bf16_rows_of_64", _values(rng, (4, 64), 10.0), _mask(rng, (4, 64), 0.6, empty=1), "bfloat16")
    add("bf16_three_d", _values(rng, (3, 4, 5)), _mask(rng, (3, 4, 5), 0.5, empty=3, full=1), "bfloat16")
    # A long bfloat16 row with about 1600 selected entries. (A count kept in bfloat16 rounds past 256, but by
    # less than the tolerance: this case checks the long sum, not the count.)
    add("bf16_long_row", _values(rng, (MAX_ELEMENTS,)), _mask(rng, (MAX_ELEMENTS,), 0.8), "bfloat16")
    near = np.clip(_values(rng, (4, 64), MAX_ABS / 3), -NEAR_MAX, NEAR_MAX)
    add("bf16_near_the_bound", near, _mask(rng, (4, 64), 0.5, empty=1, full=1), "bfloat16")
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
