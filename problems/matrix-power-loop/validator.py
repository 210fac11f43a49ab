"""Constraints of matrix-power-loop (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_dtype, check_finite

MAX_SIZE = 16
MAX_POWER = 64
#: Largest sum of absolute values in a row (the matrix's infinity norm): every power stays within 1.
MAX_ROW_SUM = 1.0


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    a = np.asarray(args["a"])
    k = args["k"]
    errors: list[str] = []
    if a.ndim == 2:
        if a.shape[0] != a.shape[1]:
            errors.append(f"a: shape {a.shape}, needs a square (n, n)")
        if not 1 <= a.shape[0] <= MAX_SIZE:
            errors.append(f"a: {a.shape[0]} rows, needs 1 to {MAX_SIZE}")
        elif np.all(np.isfinite(a)):
            row_sums = np.abs(a.astype(np.float64)).sum(axis=1)
            if row_sums.max() > MAX_ROW_SUM:
                errors.append(
                    f"a: row sum of absolute values at most {MAX_ROW_SUM:g}, got {row_sums.max():g}"
                )
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_POWER:
        errors.append(f"k: {k!r}, needs an int from 1 to {MAX_POWER}")
    return [*errors, *check_dtype(a, "a", dtype), *check_finite(a, "a")]


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def power_one(args: dict[str, Any], dtype: str) -> bool:
    return bool(args["k"] == 1)


def most_steps(args: dict[str, Any], dtype: str) -> bool:
    """k is 61 or more, near the stated 64."""
    return bool(args["k"] >= MAX_POWER - 3)


def one_by_one(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["a"]).shape[0] == 1)


def largest_matrix(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["a"]).shape[0] == MAX_SIZE)


def row_sums_at_the_bound(args: dict[str, Any], dtype: str) -> bool:
    """A row whose absolute values sum to the stated 1 (within float32 rounding)."""
    a = np.abs(np.asarray(args["a"], dtype=np.float64))
    return bool(a.sum(axis=1).max() >= MAX_ROW_SUM - 1e-5)


def not_elementwise(args: dict[str, Any], dtype: str) -> bool:
    """k >= 2 on a matrix whose power differs from its elementwise power (`a ** k` is wrong here)."""
    a, k = np.asarray(args["a"], dtype=np.float64), args["k"]
    return k >= 2 and not np.allclose(np.linalg.matrix_power(a, k), a**k, atol=1e-3)


_OK = {"a": [[0.5, 0.25], [0.0, 0.5]], "k": 3}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "a vector", "args": {**_OK, "a": [0.5, 0.25]}},
    {"why": "not square", "args": {**_OK, "a": [[0.5, 0.25, 0.0], [0.0, 0.5, 0.0]]}},
    {"why": "17 rows", "args": {**_OK, "a": np.zeros((17, 17)).tolist()}},
    {"why": "empty matrix", "args": {**_OK, "a": np.zeros((0, 0)).tolist()}},
    {"why": "a row summing past 1", "args": {**_OK, "a": [[0.75, -0.5], [0.0, 0.5]]}},
    {"why": "NaN entry", "args": {**_OK, "a": [[float("nan"), 0.0], [0.0, 0.5]]}},
    {"why": "negative k", "args": {**_OK, "k": -1}},
    {"why": "k = 0", "args": {**_OK, "k": 0}},
    {"why": "k past 64", "args": {**_OK, "k": 65}},
    {"why": "k as a float", "args": {**_OK, "k": 2.5}},
    {"why": "bfloat16 case", "dtype": "bfloat16", "args": _OK},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "k = 1", "args": {**_OK, "k": 1}},
    {"why": "largest k, a permutation", "args": {"a": [[0.0, 1.0], [-1.0, 0.0]], "k": 64}},
    {"why": "largest matrix, rows summing to 1", "args": {"a": np.full((16, 16), 1 / 16).tolist(), "k": 64}},
    {"why": "one entry", "args": {"a": [[-1.0]], "k": 63}},
]
