"""Constraints of masked-mean (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_dtype, check_finite, check_max_abs, check_max_elements

#: Largest magnitude of an entry of x: a row of 2048 such entries sums to about 2e33 in float32, far
#: below its largest value (3.4e38), so the masked sum is always finite.
MAX_ABS = 1e30
#: The largest value the cases use near the bound: 1e30 itself rounds to a float32 (and bfloat16) number
#: a little above 1e30.
NEAR_MAX = 0.99 * MAX_ABS
#: Most entries x may hold (the mask holds as many: 4096 elements per case in all).
MAX_ELEMENTS = 2048


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    x, mask = args["x"], args["mask"]
    errors: list[str] = []
    if 0 in x.shape:
        errors.append(f"x: shape {x.shape}: every dimension must be at least 1")
    if mask.shape != x.shape:
        errors.append(f"mask: shape {mask.shape}, expected the shape of x, {x.shape}")
    return [
        *errors,
        *check_dtype(x, "x", dtype),
        *check_finite(x, "x"),
        *check_max_abs(x, "x", MAX_ABS),
        *check_max_elements({"x": x}, MAX_ELEMENTS),
    ]


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def row_with_no_true(args: dict[str, Any], dtype: str) -> bool:
    return bool((~np.asarray(args["mask"]).any(axis=-1)).any())


def row_all_true(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["mask"]).all(axis=-1).any())


#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "x with 0 dimensions", "args": {"x": 1.0, "mask": True}},
    {"why": "x with 4 dimensions", "args": {"x": [[[[1.0]]]], "mask": [[[[True]]]]}},
    {"why": "string in x", "args": {"x": ["1.0"], "mask": [True]}},
    {"why": "NaN in x", "args": {"x": [float("nan"), 1.0], "mask": [False, True]}},
    {"why": "value past the bound in x", "args": {"x": [1.0, 2e30], "mask": [True, False]}},
    {"why": "empty last axis", "args": {"x": [[], []], "mask": [[], []]}},
    {"why": "empty x", "args": {"x": [], "mask": []}},
    {"why": "mask shorter than x", "args": {"x": [1.0, 2.0], "mask": [True]}},
    {"why": "mask of another rank", "args": {"x": [[1.0, 2.0]], "mask": [True, False]}},
    {"why": "mask transposed", "args": {"x": [[1.0, 2.0, 3.0]], "mask": [[True], [False], [True]]}},
    {"why": "numbers instead of booleans in mask", "args": {"x": [1.0, 2.0], "mask": [1, 0]}},
    {"why": "mask as a tree", "args": {"x": [1.0, 2.0], "mask": {"m": [True, False]}}},
    {"why": "2049 entries", "args": {"x": [1.0] * 2049, "mask": [True] * 2049}},
    {"why": "float16 case", "dtype": "float16", "args": {"x": [1.0], "mask": [True]}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "a whole row of 2048 entries at the bound, all selected",
        "args": {"x": [NEAR_MAX] * 2048, "mask": [True] * 2048},
    },
    {
        "why": "bfloat16 at the bound, one row empty",
        "dtype": "bfloat16",
        "args": {"x": [[-NEAR_MAX, NEAR_MAX], [NEAR_MAX, NEAR_MAX]], "mask": [[False, False], [True, True]]},
    },
    {"why": "one entry, not selected", "args": {"x": [[[5.0]]], "mask": [[[False]]]}},
    {"why": "tiny values", "args": {"x": [1e-30, -3e-30, 2e-30], "mask": [True, True, False]}},
]
