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
