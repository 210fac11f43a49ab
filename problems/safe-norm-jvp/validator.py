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


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def _slices(args: dict[str, Any]) -> Any:
    x = np.asarray(args["x"], dtype=np.float64)
    return x.reshape(-1, x.shape[-1])


def zero_slice_among_others(args: dict[str, Any], dtype: str) -> bool:
    """A slice of zeros beside a nonzero slice."""
    zero = ~np.any(_slices(args) != 0, axis=1)
    return bool(zero.any() and not zero.all())


def zero_vector(args: dict[str, Any], dtype: str) -> bool:
    """A 1-D x of zeros: its norm is a 0-d array, its gradient zero."""
    x = np.asarray(args["x"])
    return x.ndim == 1 and not np.any(x != 0)


def squares_overflow(args: dict[str, Any], dtype: str) -> bool:
    """A magnitude of 2^64 or more: its square overflows float32."""
    return bool(np.abs(_slices(args)).max() >= 2.0**64)


def squares_underflow(args: dict[str, Any], dtype: str) -> bool:
    """A slice whose every nonzero magnitude is 2^-64 or less: each square underflows to zero."""
    m = np.abs(_slices(args)).max(axis=1)
    return bool(np.any((m > 0) & (m <= 2.0**-64)))


def near_the_smallest_magnitude(args: dict[str, Any], dtype: str) -> bool:
    """A nonzero magnitude of 2^-90 or less, near the stated 2^-100."""
    m = np.abs(_slices(args))
    return bool(np.any((m > 0) & (m <= 2.0**-90)))


def three_dimensions(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["x"]).ndim == 3)


def last_axis_of_one(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["x"]).shape[-1] == 1)


def longest_last_axis(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["x"]).shape[-1] == MAX_LAST)


def most_entries(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["x"]).size == MAX_ELEMENTS)


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
