"""Constraints of top-k-values-indices (statement.md, "Constraints"), checked by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_dtype, check_finite, check_max_abs

#: 2^100 (about 1.27e30), exact in float32.
MAX_ABS = 2.0**100
MAX_LAST = 512
MAX_ENTRIES = 4096


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    x, k = np.asarray(args["x"]), args["k"]
    errors: list[str] = []
    if x.ndim in (1, 2):
        last = x.shape[-1]
        if not 1 <= last <= MAX_LAST:
            errors.append(f"x: last axis of {last}, needs 1 to {MAX_LAST}")
        if x.size > MAX_ENTRIES:
            errors.append(f"x: {x.size} entries, at most {MAX_ENTRIES}")
        if np.any((x == 0) & np.signbit(x)):
            errors.append("x: holds -0.0 (negative zero), which the constraints leave out")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= last:
            errors.append(f"k: {k!r}, needs an int from 1 to {last} (x.shape[-1])")
    else:
        errors.append(f"x: {x.ndim} dimensions, needs 1 or 2")
    return [*errors, *check_dtype(x, "x", dtype), *check_finite(x, "x"), *check_max_abs(x, "x", MAX_ABS)]


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def _rows(args: dict[str, Any]) -> Any:
    x = np.asarray(args["x"], dtype=np.float64)
    return x.reshape(-1, x.shape[-1])


def tie_at_the_kth_place(args: dict[str, Any], dtype: str) -> bool:
    """A row whose k-th largest entry equals one left out (k < row length): the lower index must win."""
    k = args["k"]
    for row in _rows(args):
        if k < row.size:
            ranked = np.sort(row)[::-1]
            if ranked[k - 1] == ranked[k]:
                return True
    return False


def ties_within_the_top(args: dict[str, Any], dtype: str) -> bool:
    """A row with two equal entries among its k largest."""
    k = args["k"]
    return any(np.any(np.diff(np.sort(row)[::-1][:k]) == 0) for row in _rows(args))


def k_is_the_row(args: dict[str, Any], dtype: str) -> bool:
    return bool(args["k"] == np.asarray(args["x"]).shape[-1])


def k_is_one(args: dict[str, Any], dtype: str) -> bool:
    return bool(args["k"] == 1)


def rows_of_one(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["x"]).shape[-1] == 1)


def longest_row(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["x"]).shape[-1] == MAX_LAST)


def many_entries(args: dict[str, Any], dtype: str) -> bool:
    """At least 15/16 of the stated 4,096 entries."""
    return bool(np.asarray(args["x"]).size * 16 >= MAX_ENTRIES * 15)


def only_negative(args: dict[str, Any], dtype: str) -> bool:
    """Every entry negative (a top-k that pads or masks with 0 goes wrong)."""
    return bool(np.asarray(args["x"]).max() < 0)


def large_magnitudes(args: dict[str, Any], dtype: str) -> bool:
    """Magnitudes of 2^60 or more."""
    return bool(np.abs(np.asarray(args["x"], dtype=np.float64)).max() >= 2.0**60)


_OK = {"x": [[3.0, 1.0, 2.0], [0.5, 0.5, -1.0]], "k": 2}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "k = 0", "args": {**_OK, "k": 0}},
    {"why": "k past the row", "args": {**_OK, "k": 4}},
    {"why": "a bare number", "args": {"x": 1.0, "k": 1}},
    {"why": "3 dimensions", "args": {"x": [[[1.0]]], "k": 1}},
    {"why": "an empty row", "args": {"x": [[], []], "k": 1}},
    {"why": "negative zero", "args": {"x": [1.0, -0.0], "k": 1}},
    {"why": "NaN", "args": {"x": [1.0, float("nan")], "k": 1}},
    {"why": "past 2^100", "args": {"x": [1e31, 1.0], "k": 1}},
    {"why": "a row of 513", "args": {"x": [1.0] * 513, "k": 1}},
    {"why": "too many entries", "args": {"x": [[1.0] * 64] * 65, "k": 1}},
    {"why": "k as a float", "args": {**_OK, "k": 1.5}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "k equal to the row", "args": {**_OK, "k": 3}},
    {"why": "one entry", "args": {"x": [7.0], "k": 1}},
    {"why": "all equal", "args": {"x": [[2.0] * 512] * 8, "k": 512}},
    {"why": "largest magnitudes", "args": {"x": [MAX_ABS, -MAX_ABS, 0.0], "k": 2}},
]
