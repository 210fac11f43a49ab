"""Constraints of adamw (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

from judge.constraints import (
    check_dtype,
    check_finite,
    check_has_leaves,
    check_int_range,
    check_max_abs,
    check_ndim,
    check_number,
    check_same_structure,
)

TREES = ("params", "grads", "mu", "nu")
#: Largest magnitude of params, grads and mu; nu is at most MAX_ABS**2. Then every moment stays below
#: 1e6, and 1 / (1 - 0.9) bias correction times MAX_ABS keeps every result far below float32's 3.4e38.
MAX_ABS = 1e3
MAX_STEP = 1_000_000


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    errors = check_has_leaves(args["params"], "params")
    for name in TREES:
        errors += check_ndim(args[name], name, max_ndim=3)
        errors += check_dtype(args[name], name, dtype)
        errors += check_finite(args[name], name)
    for name in TREES[:3]:
        errors += check_max_abs(args[name], name, MAX_ABS)
    errors += check_max_abs(args["nu"], "nu", MAX_ABS**2)
    for name in TREES[1:]:
        errors += check_same_structure(args["params"], "params", args[name], name, shapes=True)
    errors += _non_negative(args["nu"])
    errors += check_int_range(args["step"], "step", ge=0, le=MAX_STEP)
    errors += check_number(args["learning_rate"], "learning_rate", ge=0.0, le=1.0)
    errors += check_number(args["weight_decay"], "weight_decay", ge=0.0, le=1.0)
    return errors


def _non_negative(tree: Any) -> list[str]:
    from judge.constraints import leaves_with_paths

    errors = []
    for path, leaf in leaves_with_paths(tree, "nu"):
        if leaf.size and float(leaf.astype("float64").min()) < 0:
            errors.append(f"{path}: a negative second moment, every value must be >= 0")
    return errors


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def step_zero(args: dict[str, Any], dtype: str) -> bool:
    return int(args["step"]) == 0


_OK = {
    "params": {"w": [1.0, -2.0]},
    "grads": {"w": [0.5, -0.1]},
    "mu": {"w": [0.0, 0.0]},
    "nu": {"w": [0.0, 0.0]},
    "step": 0,
    "learning_rate": 0.1,
    "weight_decay": 0.01,
}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "fractional step", "args": {**_OK, "step": 1.5}},
    {"why": "negative step", "args": {**_OK, "step": -1}},
    {"why": "step given as a list", "args": {**_OK, "step": [0]}},
    {"why": "step past the bound", "args": {**_OK, "step": 2_000_000}},
    {"why": "negative second moment", "args": {**_OK, "nu": {"w": [0.0, -0.5]}}},
    {"why": "mu keys differ", "args": {**_OK, "mu": {"v": [0.0, 0.0]}}},
    {"why": "nu shape differs", "args": {**_OK, "nu": {"w": [0.0]}}},
    {"why": "gradient past the bound", "args": {**_OK, "grads": {"w": [5e3, 0.0]}}},
    {"why": "learning rate above 1", "args": {**_OK, "learning_rate": 2.0}},
    {"why": "negative weight decay", "args": {**_OK, "weight_decay": -0.1}},
    {"why": "no leaf", "args": {**_OK, "params": {}, "grads": {}, "mu": {}, "nu": {}}},
    {"why": "4-D leaf", "args": {**_OK, **{n: {"w": [[[[1.0]]]]} for n in TREES}}},
    {"why": "NaN gradient", "args": {**_OK, "grads": {"w": [float("nan"), 0.0]}}},
    {"why": "boolean leaf", "args": {**_OK, "mu": {"w": [True, False]}}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "every value at the bound, zero second moment, first step",
        "args": {
            "params": {"w": [1e3, -1e3]},
            "grads": {"w": [1e3, -1e3]},
            "mu": {"w": [1e3, 1e3]},
            "nu": {"w": [0.0, 0.0]},
            "step": 0,
            "learning_rate": 1.0,
            "weight_decay": 1.0,
        },
    },
    {
        # Where the reference's accuracy shows: the step (lr times about 1) nearly cancels the parameter 1,
        # leaving about 1e-4, where the float32 1 - 0.999**t is 6.6e-6 off: 6.6x the float32 tolerance
        # (judge check's accuracy check). Not all of it (lr 1): the result would be 1e-8, which float32's
        # own rounding of 1 - 1 misses by far more than bfloat16's tolerance there (this input is also
        # measured in bfloat16).
        "why": "the step nearly cancels the parameter, first step",
        "args": {
            "params": [1.0],
            "grads": [1.0],
            "mu": [0.0],
            "nu": [0.0],
            "step": 0,
            "learning_rate": 0.9999,
            "weight_decay": 0.0,
        },
    },
    {
        "why": "zero gradient and moments, largest step",
        "args": {
            "params": [0.5],
            "grads": [0.0],
            "mu": [0.0],
            "nu": [0.0],
            "step": MAX_STEP,
            "learning_rate": 1.0,
            "weight_decay": 0.0,
        },
    },
    {
        "why": "bfloat16 at the bound",
        "dtype": "bfloat16",
        "args": {
            "params": [1e3],
            "grads": [-1e3],
            "mu": [1e3],
            "nu": [1e6],
            "step": 3,
            "learning_rate": 1.0,
            "weight_decay": 1.0,
        },
    },
]
