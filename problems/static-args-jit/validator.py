"""Constraints of static-args-jit (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_finite, check_int, check_max_abs, check_max_elements

#: Largest magnitude of any value: exp(1e4) overflows float32 many times over, so logsumexp must shift.
MAX_ABS = 1e4
#: Length of each axis: at most 128 values of magnitude 1e4 sum to less than 2^21.
MAX_AXIS = 128
#: Elements of x at most.
MAX_ELEMENTS = 4096


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    x = args["x"]
    errors: list[str] = []
    for i, length in enumerate(x.shape):
        errors += check_int(int(length), f"x.shape[{i}]", ge=1, le=MAX_AXIS)
    errors += check_max_elements({"x": x}, MAX_ELEMENTS)
    errors += check_finite(x, "x") + check_max_abs(x, "x", MAX_ABS)
    return errors + check_int(args["axis"], "axis", ge=-x.ndim, le=x.ndim - 1)


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def _slices(args: dict[str, Any]) -> Any:
    """x with the reduced axis first: ``[k, ...]`` holds entry k of every slice."""
    return np.moveaxis(np.asarray(args["x"], dtype=np.float64), args["axis"], 0)


def logsumexp_values_thousands_apart(args: dict[str, Any], dtype: str) -> bool:
    """A logsumexp case with a slice whose own values span 1000 or more (a shift by the mean overflows)."""
    if args["mode"] != "logsumexp":
        return False
    slices = _slices(args)
    return bool(np.max(slices.max(axis=0) - slices.min(axis=0)) >= 1000.0)


def logsumexp_slices_thousands_apart(args: dict[str, Any], dtype: str) -> bool:
    """A logsumexp case whose slices' maxima lie 1000 or more apart (a shift by the global max underflows)."""
    if args["mode"] != "logsumexp":
        return False
    peaks = _slices(args).max(axis=0)
    return bool(peaks.size > 1 and np.max(peaks) - np.min(peaks) >= 1000.0)


def dropped_axis_beside_another_length_one(args: dict[str, Any], dtype: str) -> bool:
    """keepdims false, and an axis other than the reduced one has length 1 (it must stay)."""
    x, axis = args["x"], args["axis"] % args["x"].ndim
    return not args["keepdims"] and any(n == 1 for i, n in enumerate(x.shape) if i != axis)


def vector_to_scalar(args: dict[str, Any], dtype: str) -> bool:
    """keepdims false on a 1-D x: the result is a scalar."""
    return not args["keepdims"] and args["x"].ndim == 1


def negative_axis(args: dict[str, Any], dtype: str) -> bool:
    return bool(args["axis"] < 0)


def kept_axis(args: dict[str, Any], dtype: str) -> bool:
    return bool(args["keepdims"])


_X = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
_OK: dict[str, Any] = {"x": _X, "axis": 1, "mode": "sum", "keepdims": False}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "axis past the last", "args": {**_OK, "axis": 2}},
    {"why": "negative axis past the first", "args": {**_OK, "axis": -3}},
    {"why": "axis given as a list", "args": {**_OK, "axis": [1]}},
    {"why": "fractional axis", "args": {**_OK, "axis": 0.5}},
    {"why": "unknown mode", "args": {**_OK, "mode": "median"}},
    {"why": "mode given as a number", "args": {**_OK, "mode": 1}},
    {"why": "keepdims given as a number", "args": {**_OK, "keepdims": 1}},
    {"why": "keepdims given as a string", "args": {**_OK, "keepdims": "true"}},
    {"why": "empty axis", "args": {**_OK, "x": [[], []]}},
    {"why": "axis longer than 128", "args": {**_OK, "x": [1.0] * 129, "axis": 0}},
    {"why": "rank 4", "args": {**_OK, "x": [[[[1.0]]]], "axis": 0}},
    {"why": "a scalar", "args": {**_OK, "x": 1.0, "axis": 0}},
    {"why": "value past the bound", "args": {**_OK, "x": [[1.0, 2.0, 3.0], [4.0, 5.0, 2e4]]}},
    {"why": "x as a tree", "args": {**_OK, "x": {"a": [1.0, 2.0]}}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "largest values, logsumexp",
        "args": {"x": [MAX_ABS, MAX_ABS, -MAX_ABS], "axis": 0, "mode": "logsumexp", "keepdims": False},
    },
    {
        "why": "smallest values, logsumexp",
        "args": {"x": [[-MAX_ABS], [-MAX_ABS]], "axis": -2, "mode": "logsumexp", "keepdims": True},
    },
    {
        "why": "longest axis of the largest values, sum",
        "args": {"x": [[MAX_ABS] * MAX_AXIS] * 32, "axis": 1, "mode": "sum", "keepdims": False},
    },
    {
        "why": "longest axis, mean",
        "args": {"x": [[-MAX_ABS] * MAX_AXIS] * 32, "axis": -1, "mode": "mean", "keepdims": True},
    },
    {
        "why": "an axis of length 1, max",
        "args": {"x": [[[2.5]], [[-1.0]]], "axis": 2, "mode": "max", "keepdims": False},
    },
]
