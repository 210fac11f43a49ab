"""Constraints of linear-recurrence-scan (statement.md, "Constraints"), checked by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_dtype, check_finite, check_max_abs

MAX_A = 1.0
MAX_B = 1000.0
MAX_STEPS = 1024
MAX_WIDTH = 64
MAX_ENTRIES = 2048


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    a, b = np.asarray(args["a"]), np.asarray(args["b"])
    errors: list[str] = []
    if a.shape != b.shape:
        errors.append(f"a: shape {a.shape}, b: shape {b.shape}: they must match")
    elif a.ndim in (1, 2):
        if not 1 <= a.shape[0] <= MAX_STEPS:
            errors.append(f"a: {a.shape[0]} steps, needs 1 to {MAX_STEPS}")
        if a.ndim == 2 and not 1 <= a.shape[1] <= MAX_WIDTH:
            errors.append(f"a: width {a.shape[1]}, needs 1 to {MAX_WIDTH}")
        if a.size > MAX_ENTRIES:
            errors.append(f"a: {a.size} entries, at most {MAX_ENTRIES}")
    return [
        *errors,
        *check_dtype(a, "a", dtype),
        *check_dtype(b, "b", dtype),
        *check_finite(a, "a"),
        *check_finite(b, "b"),
        *check_max_abs(a, "a", MAX_A),
        *check_max_abs(b, "b", MAX_B),
    ]


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def zero_after_the_first_step(args: dict[str, Any], dtype: str) -> bool:
    """Some a_t = 0 with t >= 1: the recurrence forgets what came before (a division by prod(a) breaks)."""
    a = np.asarray(args["a"])
    return bool(a.shape[0] > 1 and np.any(a[1:] == 0))


def negative_a(args: dict[str, Any], dtype: str) -> bool:
    """Some a_t of -0.5 or less: magnitudes, not values, are bounded by 1."""
    return bool(np.asarray(args["a"]).min() <= -0.5)


def one_step(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["a"]).shape[0] == 1)


def most_steps(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["a"]).shape[0] == MAX_STEPS)


def one_column(args: dict[str, Any], dtype: str) -> bool:
    """A 2-D a of width 1: d = 1 recurrence, still shaped (T, 1)."""
    a = np.asarray(args["a"])
    return bool(a.ndim == 2 and a.shape[1] == 1)


def widest(args: dict[str, Any], dtype: str) -> bool:
    a = np.asarray(args["a"])
    return bool(a.ndim == 2 and a.shape[1] == MAX_WIDTH)


def most_entries(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["a"]).size == MAX_ENTRIES)


_OK = {"a": [0.5, 0.5], "b": [1.0, 2.0]}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "shapes differ", "args": {"a": [0.5, 0.5], "b": [1.0, 2.0, 3.0]}},
    {"why": "no steps", "args": {"a": [], "b": []}},
    {"why": "a past 1", "args": {**_OK, "a": [1.5, 0.5]}},
    {"why": "b past 1000", "args": {**_OK, "b": [1001.0, 0.0]}},
    {"why": "3 dimensions", "args": {"a": [[[0.5]]], "b": [[[1.0]]]}},
    {"why": "width 65", "args": {"a": [[0.5] * 65], "b": [[1.0] * 65]}},
    {"why": "1025 steps", "args": {"a": [0.5] * 1025, "b": [1.0] * 1025}},
    {"why": "too many entries", "args": {"a": [[0.5] * 64] * 33, "b": [[1.0] * 64] * 33}},
    {"why": "NaN", "args": {**_OK, "b": [float("nan"), 0.0]}},
    {"why": "bfloat16 case", "dtype": "bfloat16", "args": _OK},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "longest, a = 1 (a running sum)", "args": {"a": [1.0] * 1024, "b": [1000.0] * 1024}},
    {"why": "a = -1 alternating", "args": {"a": [-1.0] * 8, "b": [-1000.0] * 8}},
    {"why": "one step", "args": {"a": [[0.0]], "b": [[5.0]]}},
    {"why": "widest", "args": {"a": [[0.0] * 64] * 32, "b": [[1.0] * 64] * 32}},
]
