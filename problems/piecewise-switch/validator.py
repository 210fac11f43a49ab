"""Constraints of piecewise-switch (statement.md, "Constraints"), checked by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_dtype, check_finite, check_max_abs

MAX_ABS = 1e4
MIN_ABS = 1e-4
MAX_ENTRIES = 4096


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    x, mode = np.asarray(args["x"]), np.asarray(args["mode"])
    errors: list[str] = []
    if mode.dtype != np.int32 or mode.shape != ():
        errors.append(f"mode: {mode.dtype} of shape {mode.shape}, expected an int32 scalar")
    elif not 0 <= int(mode) <= 3:
        errors.append(f"mode: {int(mode)}, needs 0, 1, 2 or 3")
    elif x.size and np.all(np.isfinite(x)):
        values = x.astype(np.float64)
        if int(mode) in (1, 2) and values.min() < np.float32(MIN_ABS):
            errors.append(f"x: entries at least {MIN_ABS:g} with mode {int(mode)}, got {values.min():g}")
        if int(mode) == 3 and np.abs(values).min() < np.float32(MIN_ABS):
            errors.append(f"x: magnitudes at least {MIN_ABS:g} with mode 3, got {np.abs(values).min():g}")
    if x.size > MAX_ENTRIES:
        errors.append(f"x: {x.size} entries, at most {MAX_ENTRIES}")
    return [*errors, *check_dtype(x, "x", dtype), *check_finite(x, "x"), *check_max_abs(x, "x", MAX_ABS)]


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def _mode(args: dict[str, Any]) -> int:
    return int(np.asarray(args["mode"]))


def _x(args: dict[str, Any]) -> Any:
    return np.asarray(args["x"], dtype=np.float64)


def identity_with_zeros_and_negatives(args: dict[str, Any], dtype: str) -> bool:
    """Mode 0 on an x holding zeros and negatives (the other branches are undefined there)."""
    x = _x(args)
    return _mode(args) == 0 and bool(np.any(x == 0) and np.any(x < 0))


def square_roots_near_the_floor(args: dict[str, Any], dtype: str) -> bool:
    """Mode 1 with an entry within 10x of the stated 1e-4 floor."""
    return _mode(args) == 1 and bool(_x(args).min() <= 10 * MIN_ABS)


def logs_near_the_floor(args: dict[str, Any], dtype: str) -> bool:
    """Mode 2 with an entry within 10x of the stated 1e-4 floor."""
    return _mode(args) == 2 and bool(_x(args).min() <= 10 * MIN_ABS)


def reciprocals_near_the_floor_both_signs(args: dict[str, Any], dtype: str) -> bool:
    """Mode 3 with entries of both signs, one within 10x of the stated 1e-4 floor in magnitude."""
    x = _x(args)
    return _mode(args) == 3 and bool(np.abs(x).min() <= 10 * MIN_ABS and x.min() < 0 < x.max())


def mode_0(args: dict[str, Any], dtype: str) -> bool:
    return _mode(args) == 0


def mode_1(args: dict[str, Any], dtype: str) -> bool:
    return _mode(args) == 1


def mode_2(args: dict[str, Any], dtype: str) -> bool:
    return _mode(args) == 2


def mode_3(args: dict[str, Any], dtype: str) -> bool:
    return _mode(args) == 3


def many_entries(args: dict[str, Any], dtype: str) -> bool:
    """At least 15/16 of the stated 4,096 entries."""
    return bool(np.asarray(args["x"]).size * 16 >= MAX_ENTRIES * 15)


#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "mode 4", "args": {"x": [1.0], "mode": 4}},
    {"why": "mode -1", "args": {"x": [1.0], "mode": -1}},
    {"why": "mode as a list", "args": {"x": [1.0], "mode": [1]}},
    {"why": "a fractional mode", "args": {"x": [1.0], "mode": 1.5}},
    {"why": "a negative square root", "args": {"x": [4.0, -1.0], "mode": 1}},
    {"why": "log of zero", "args": {"x": [0.0, 1.0], "mode": 2}},
    {"why": "reciprocal of a tiny value", "args": {"x": [1e-6, 1.0], "mode": 3}},
    {"why": "past 1e4", "args": {"x": [2e4], "mode": 0}},
    {"why": "a bare number", "args": {"x": 1.0, "mode": 0}},
    {"why": "too many entries", "args": {"x": [[1.0] * 64] * 65, "mode": 0}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "smallest square root", "args": {"x": [1e-4, 1e4], "mode": 1}},
    {"why": "smallest log", "args": {"x": [1e-4, 1e4], "mode": 2}},
    {"why": "smallest reciprocals", "args": {"x": [[1e-4, -1e-4], [1e4, -1e4]], "mode": 3}},
    {"why": "identity of zeros and negatives", "args": {"x": [0.0, -1e4, 1e4], "mode": 0}},
]
