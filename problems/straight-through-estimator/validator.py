"""Constraints of straight-through-estimator (statement.md, "Constraints"), checked on every case."""

from __future__ import annotations

from typing import Any

from judge.constraints import (
    check_dtype,
    check_finite,
    check_has_leaves,
    check_max_abs,
    check_max_elements,
    check_ndim,
    empty_leaf_not_first,
)

#: Largest magnitude: far inside both dtypes' range (above 2**24 every float32 is an integer already).
MAX_ABS = 1e6
MAX_ELEMENTS = 65_536


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    x = args["x"]
    return [
        *check_has_leaves(x, "x"),
        *check_ndim(x, "x", max_ndim=3),
        *check_dtype(x, "x", dtype),
        *check_finite(x, "x"),
        *check_max_abs(x, "x", MAX_ABS),
        *check_max_elements({"x": x}, MAX_ELEMENTS),
    ]


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def empty_leaf_after_the_first(args: dict[str, Any], dtype: str) -> bool:
    return empty_leaf_not_first(args["x"])


#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "no leaf", "args": {"x": {}}},
    {"why": "only empty containers", "args": {"x": {"a": {}, "b": [{}]}}},
    {"why": "4-D leaf", "args": {"x": [[[[1.0]]]]}},
    {"why": "NaN value", "args": {"x": {"w": [float("nan")]}}},
    {"why": "infinite value", "args": {"x": [float("inf")]}},
    {"why": "value past the bound", "args": {"x": {"w": [0.5, 2e6]}}},
    {"why": "string leaf", "args": {"x": {"w": "1.5"}}},
    {"why": "ragged leaf", "args": {"x": [[1.0, 2.0], [3.0]]}},
    {"why": "too many elements", "args": {"x": [[0.5] * 300] * 300}},
    {"why": "missing x", "args": {}},
    {"why": "float16 case", "dtype": "float16", "args": {"x": [0.5]}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "every value at the bound", "args": {"x": [[1e6, -1e6]] * 128}},
    {"why": "bfloat16 at the bound", "dtype": "bfloat16", "args": {"x": {"w": [999424.0, -0.5, 0.5]}}},
    {"why": "65,536 elements", "args": {"x": [[2.5] * 256] * 256}},
    {"why": "tiny values", "args": {"x": {"w": [1e-30, -1e-30]}}},
]
