"""Constraints of sgd-momentum (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

from judge.constraints import (
    check_dtype,
    check_finite,
    check_has_leaves,
    check_ndim,
    check_number,
    check_same_structure,
)

TREES = ("params", "grads", "velocity")


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    errors = check_has_leaves(args["params"], "params")
    for name in TREES:
        errors += check_ndim(args[name], name, max_ndim=3)
        errors += check_dtype(args[name], name, dtype)
        errors += check_finite(args[name], name)
    for name in TREES[1:]:
        errors += check_same_structure(args["params"], "params", args[name], name, shapes=True)
    errors += check_number(args["learning_rate"], "learning_rate", ge=0.0)
    errors += check_number(args["momentum"], "momentum", ge=0.0, lt=1.0)
    return errors


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
]
