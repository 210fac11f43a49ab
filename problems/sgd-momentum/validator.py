"""Constraints of sgd-momentum (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

from judge.constraints import (
    check_dtype,
    check_finite,
    check_has_leaves,
    check_max_abs,
    check_ndim,
    check_number,
    check_same_structure,
    empty_leaf_not_first,
)

TREES = ("params", "grads", "velocity")
#: Largest magnitude of a value and of learning_rate: |momentum * v + g| <= 2e15 and
#: |p - learning_rate * v_new| <= 1e15 + 1e15 * 2e15 = 2e30, finite in float32 and bfloat16 (max 3.4e38).
MAX_ABS = 1e15


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    errors = check_has_leaves(args["params"], "params")
    for name in TREES:
        errors += check_ndim(args[name], name, max_ndim=3)
        errors += check_dtype(args[name], name, dtype)
        errors += check_finite(args[name], name)
        errors += check_max_abs(args[name], name, MAX_ABS)
    for name in TREES[1:]:
        errors += check_same_structure(args["params"], "params", args[name], name, shapes=True)
    errors += check_number(args["learning_rate"], "learning_rate", ge=0.0, le=MAX_ABS)
    errors += check_number(args["momentum"], "momentum", ge=0.0, lt=1.0)
    return errors


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def empty_leaf_after_the_first(args: dict[str, Any], dtype: str) -> bool:
    return empty_leaf_not_first(args["params"])


_OK = {
    "params": {"w": [1.0, 2.0]},
    "grads": {"w": [0.1, 0.2]},
    "velocity": {"w": [0.0, 0.0]},
    "learning_rate": 0.1,
    "momentum": 0.9,
}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {
        "why": "4-D leaf",
        "args": {
            **_OK,
            "params": {"w": [[[[1.0]]]]},
            "grads": {"w": [[[[1.0]]]]},
            "velocity": {"w": [[[[0.0]]]]},
        },
    },
    {"why": "grads keys differ", "args": {**_OK, "grads": {"v": [0.1, 0.2]}}},
    {"why": "velocity shape differs", "args": {**_OK, "velocity": {"w": [0.0, 0.0, 0.0]}}},
    {"why": "velocity is a list node", "args": {**_OK, "velocity": [{"w": [0.0, 0.0]}]}},
    {"why": "momentum 1", "args": {**_OK, "momentum": 1.0}},
    {"why": "negative momentum", "args": {**_OK, "momentum": -0.1}},
    {"why": "negative learning rate", "args": {**_OK, "learning_rate": -0.1}},
    {"why": "no leaf", "args": {**_OK, "params": {}, "grads": {}, "velocity": {}}},
    {"why": "NaN gradient", "args": {**_OK, "grads": {"w": [float("nan"), 0.0]}}},
    {"why": "boolean leaf", "args": {**_OK, "grads": {"w": [True, False]}}},
    {"why": "missing velocity", "args": {k: v for k, v in _OK.items() if k != "velocity"}},
    {"why": "a value past the bound", "args": {**_OK, "velocity": {"w": [0.0, -1e20]}}},
    {"why": "learning rate past the bound", "args": {**_OK, "learning_rate": 1e20}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "every value and the learning rate at the bound",
        "args": {
            "params": {"w": [1e15, -1e15]},
            "grads": {"w": [1e15, 1e15]},
            "velocity": {"w": [1e15, -1e15]},
            "learning_rate": 1e15,
            "momentum": 0.999,
        },
    },
    {
        "why": "bfloat16 at the bound",
        "dtype": "bfloat16",
        "args": {
            "params": [1e15],
            "grads": [-1e15],
            "velocity": [-1e15],
            "learning_rate": 1e15,
            "momentum": 0.5,
        },
    },
]
