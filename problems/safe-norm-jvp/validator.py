"""Constraints of safe-norm-jvp (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_dtype, check_finite, check_max_abs

#: 2^100 and 2^-100 (about 1.27e30 and 7.9e-31), exact in float32: their squares leave its range.
MAX_ABS = 2.0**100
MIN_NONZERO = 2.0**-100
MAX_LAST = 64
MAX_ELEMENTS = 4096


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    x = np.asarray(args["x"])
    errors: list[str] = []
    if x.ndim >= 1:
        if not 1 <= x.shape[-1] <= MAX_LAST:
            errors.append(f"x: last axis of {x.shape[-1]}, needs 1 to {MAX_LAST}")
        if x.size > MAX_ELEMENTS:
            errors.append(f"x: {x.size} entries, at most {MAX_ELEMENTS}")
        magnitudes = np.abs(x.astype(np.float64))
        small = magnitudes[(magnitudes > 0) & (magnitudes < MIN_NONZERO)]
        if small.size:
            errors.append(f"x: nonzero magnitudes at least {MIN_NONZERO:g}, got {small.min():g}")
    return [*errors, *check_dtype(x, "x", dtype), *check_finite(x, "x"), *check_max_abs(x, "x", MAX_ABS)]


#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "a bare number", "args": {"x": 1.0}},
    {"why": "4 dimensions", "args": {"x": [[[[1.0]]]]}},
    {"why": "an empty last axis", "args": {"x": [[], []]}},
    {"why": "a last axis of 65", "args": {"x": [1.0] * 65}},
    {"why": "too many entries", "args": {"x": [[1.0] * 64] * 65}},
    {"why": "a subnormal entry", "args": {"x": [1e-40, 1.0]}},
    {"why": "an entry just under 2^-100", "args": {"x": [5e-31]}},
    {"why": "an entry past 2^100", "args": {"x": [2e30]}},
    {"why": "NaN", "args": {"x": [float("nan")]}},
    {"why": "bfloat16 case", "dtype": "bfloat16", "args": {"x": [1.0]}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "largest magnitudes, longest axis", "args": {"x": [MAX_ABS, -MAX_ABS] * 32}},
    {"why": "smallest magnitudes", "args": {"x": [[MIN_NONZERO, -MIN_NONZERO], [0.0, MIN_NONZERO]]}},
    {"why": "all zeros", "args": {"x": [[0.0, 0.0, 0.0]]}},
    {"why": "one entry per slice", "args": {"x": [[[-3.0]], [[0.0]]]}},
]
