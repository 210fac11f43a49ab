"""Constraints of global-norm-clipping (statement.md, "Constraints"), checked on every case by judge check."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import (
    all_zero,
    check_dtype,
    check_finite,
    check_has_leaves,
    check_max_abs,
    check_ndim,
    check_number,
    empty_leaf_not_first,
    leaves_with_paths,
)

#: Largest gradient magnitude: even 65,536 entries this large (the most a case may hold) square and sum to
#: 6.6e34, far below float32's largest value (3.4e38), so the reference's float32 norm stays finite.
MAX_ABS = 1e15


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    grads = args["grads"]
    return [
        *check_has_leaves(grads, "grads"),
        *check_ndim(grads, "grads", max_ndim=3),
        *check_dtype(grads, "grads", dtype),
        *check_finite(grads, "grads"),
        *check_max_abs(grads, "grads", MAX_ABS),
        *check_number(args["max_norm"], "max_norm", gt=0.0),
    ]


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def all_zero_gradients(args: dict[str, Any], dtype: str) -> bool:
    return all_zero(args["grads"])


def empty_leaf_after_the_first(args: dict[str, Any], dtype: str) -> bool:
    return empty_leaf_not_first(args["grads"])


def _norm(args: dict[str, Any]) -> float:
    leaves = [np.asarray(leaf, dtype=np.float64) for _, leaf in leaves_with_paths(args["grads"], "grads")]
    return float(np.sqrt(sum(float(np.sum(leaf**2)) for leaf in leaves)))


def norm_above_max_norm(args: dict[str, Any], dtype: str) -> bool:
    return _norm(args) > args["max_norm"]


def nonzero_norm_within_max_norm(args: dict[str, Any], dtype: str) -> bool:
    return 0.0 < _norm(args) <= args["max_norm"]


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
    {"why": "squares overflow float32", "args": {"grads": {"w": [1e20, 1e20]}, "max_norm": 1.0}},
    {"why": "one value past the bound", "args": {"grads": [{"w": [0.5]}, {"w": [2e15]}], "max_norm": 1.0}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "every value at the bound", "args": {"grads": {"w": [[1e15] * 64] * 64}, "max_norm": 1.0}},
    {"why": "bfloat16 at the bound", "dtype": "bfloat16", "args": {"grads": [1e15, -1e15], "max_norm": 1e-3}},
    {"why": "tiny values, tiny max_norm", "args": {"grads": {"w": [1e-20, -1e-20]}, "max_norm": 1e-30}},
]
