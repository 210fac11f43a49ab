"""Constraints of hessian-vector-product (statement.md, "Constraints"), checked on every case."""

from __future__ import annotations

from typing import Any

from judge.constraints import (
    check_dtype,
    check_finite,
    check_has_leaves,
    check_max_abs,
    check_max_elements,
    check_ndim,
    check_same_structure,
    empty_leaf_not_first,
)

#: Largest magnitude: exp(10) * 4,096 entries and (10 * 4,096)**2 stay far inside float32's range.
MAX_ABS = 10.0
MAX_ELEMENTS = 4_096


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    x, v = args["x"], args["v"]
    return [
        *check_has_leaves(x, "x"),
        *check_ndim(x, "x", max_ndim=3),
        *check_dtype(x, "x", dtype),
        *check_dtype(v, "v", dtype),
        *check_finite(x, "x"),
        *check_finite(v, "v"),
        *check_max_abs(x, "x", MAX_ABS),
        *check_max_abs(v, "v", MAX_ABS),
        *check_max_elements({"x": x}, MAX_ELEMENTS),
        *check_same_structure(x, "x", v, "v"),
    ]


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def empty_leaf_after_the_first(args: dict[str, Any], dtype: str) -> bool:
    """An empty leaf that is not the first in flatten order: "may be empty" anywhere in the tree."""
    return empty_leaf_not_first(args["x"])


def hundreds_of_coordinates(args: dict[str, Any], dtype: str) -> bool:
    """A hundred coordinates or more, where forming the Hessian costs hundreds of times the FLOPs."""
    from judge.constraints import leaves_with_paths

    return sum(leaf.size for _, leaf in leaves_with_paths(args["x"], "x")) >= 100


#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "f not in the menu", "args": {"f": "cubic", "x": [1.0], "v": [1.0]}},
    {"why": "f not a name", "args": {"f": 3.0, "x": [1.0], "v": [1.0]}},
    {"why": "f as code", "args": {"f": "lambda x: x", "x": [1.0], "v": [1.0]}},
    {"why": "no leaf", "args": {"f": "quartic", "x": {}, "v": {}}},
    {"why": "4-D leaf", "args": {"f": "quartic", "x": [[[[1.0]]]], "v": [[[[1.0]]]]}},
    {"why": "v of another shape", "args": {"f": "quartic", "x": [1.0, 2.0], "v": [1.0]}},
    {"why": "v misses a key", "args": {"f": "soft_norm", "x": {"a": 1.0, "b": 2.0}, "v": {"a": 1.0}}},
    {"why": "value past the bound", "args": {"f": "log_sum_exp", "x": [11.0], "v": [1.0]}},
    {"why": "NaN direction", "args": {"f": "quartic", "x": [1.0], "v": [float("nan")]}},
    {"why": "too many elements", "args": {"f": "quartic", "x": [0.0] * 5000, "v": [0.0] * 5000}},
    {"why": "missing v", "args": {"f": "quartic", "x": [1.0]}},
    {"why": "bfloat16 case", "dtype": "bfloat16", "args": {"f": "quartic", "x": [1.0], "v": [1.0]}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "log_sum_exp at the bound",
        "args": {"f": "log_sum_exp", "x": [10.0] * 4096, "v": [-10.0] * 4096},
    },
    {
        "why": "coupled_cosine at the bound",
        "args": {"f": "coupled_cosine", "x": [10.0] * 4096, "v": [10.0] * 4096},
    },
    {
        "why": "quartic at the bound",
        "args": {"f": "quartic", "x": {"w": [[-10.0] * 64] * 64}, "v": {"w": [[10.0] * 64] * 64}},
    },
    {"why": "soft_norm at zero", "args": {"f": "soft_norm", "x": [0.0, 0.0], "v": [1e-30, 0.0]}},
]
