"""Constraints of global-norm-clipping (statement.md, "Constraints"), checked on every case by judge check."""

from __future__ import annotations

from typing import Any

from judge.constraints import check_dtype, check_finite, check_has_leaves, check_ndim, check_number


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    grads = args["grads"]
    return [
        *check_has_leaves(grads, "grads"),
        *check_ndim(grads, "grads", max_ndim=3),
        *check_dtype(grads, "grads", dtype),
        *check_finite(grads, "grads"),
        *check_number(args["max_norm"], "max_norm", gt=0.0),
    ]


#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "4-D leaf", "args": {"grads": {"w": [[[[1.0]]]]}, "max_norm": 1.0}},
    {"why": "max_norm zero", "args": {"grads": {"w": [1.0]}, "max_norm": 0.0}},
    {"why": "max_norm negative", "args": {"grads": {"w": [1.0]}, "max_norm": -1.0}},
    {"why": "no leaf", "args": {"grads": {}, "max_norm": 1.0}},
    {"why": "only empty containers", "args": {"grads": {"a": {}, "b": {}}, "max_norm": 1.0}},
    {"why": "NaN gradient", "args": {"grads": {"w": [float("nan")]}, "max_norm": 1.0}},
    {"why": "infinite max_norm", "args": {"grads": {"w": [1.0]}, "max_norm": float("inf")}},
    {"why": "string leaf", "args": {"grads": {"w": "1.0"}, "max_norm": 1.0}},
    {"why": "max_norm as a list", "args": {"grads": {"w": [1.0]}, "max_norm": [1.0]}},
    {"why": "ragged leaf", "args": {"grads": {"w": [[1.0, 2.0], [3.0]]}, "max_norm": 1.0}},
    {"why": "missing max_norm", "args": {"grads": {"w": [1.0]}}},
    {"why": "float16 case", "dtype": "float16", "args": {"grads": {"w": [1.0]}, "max_norm": 1.0}},
]
