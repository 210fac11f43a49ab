"""Constraints of per-example-clipping (statement.md, "Constraints"), checked on every case by judge check."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_finite, check_max_abs, check_max_elements, check_number

MAX_BATCH = 256
MAX_DIM = 64
MAX_ELEMENTS = 4096
#: Largest magnitude: a residual of at most 64 * 1e8 + 1e4 times an input of 1e4, squared and summed over
#: 64 coordinates, stays far below float32's (and bfloat16's) maximum.
MAX_ABS = 1e4
MAX_NORM = 1e4


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    w, x, y = args["w"], args["x"], args["y"]
    errors: list[str] = []
    (d,), (batch, e), (targets,) = w.shape, x.shape, y.shape
    if not 1 <= d <= MAX_DIM:
        errors.append(f"w: {d} weights, 1 to {MAX_DIM} allowed")
    if not 1 <= batch <= MAX_BATCH:
        errors.append(f"x: {batch} examples, 1 to {MAX_BATCH} allowed")
    if e != d:
        errors.append(f"x: rows of {e} values, expected {d} like w")
    if targets != batch:
        errors.append(f"y: {targets} targets, expected {batch}: one per row of x")
    errors += check_max_elements({"w": w, "x": x, "y": y}, MAX_ELEMENTS)
    for name in ("w", "x", "y"):
        errors += check_finite(args[name], name) + check_max_abs(args[name], name, MAX_ABS)
    errors += check_number(args["max_norm"], "max_norm", gt=0.0, le=MAX_NORM)
    return errors


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def _norms(args: dict[str, Any]) -> Any:
    w, x, y = (np.asarray(args[n], dtype=np.float64) for n in ("w", "x", "y"))
    residual = x @ w - y
    return np.abs(residual) * np.linalg.norm(x, axis=1)


def some_clipped_some_not(args: dict[str, Any], dtype: str) -> bool:
    """Examples whose gradient norm is above max_norm and others within it, in one batch."""
    norms = _norms(args)
    return bool((norms > args["max_norm"]).any() and ((norms > 0) & (norms <= args["max_norm"])).any())


def an_exact_fit(args: dict[str, Any], dtype: str) -> bool:
    """An example the model fits exactly (or with x_i = 0): its gradient is 0."""
    return bool((_norms(args) == 0).any())


_OK = {"w": [1.0, -1.0], "x": [[1.0, 0.0], [2.0, 1.0]], "y": [0.0, 1.0], "max_norm": 1.0}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "w as a matrix", "args": {**_OK, "w": [[1.0, -1.0]]}},
    {"why": "x as a vector", "args": {**_OK, "x": [1.0, 0.0]}},
    {"why": "y as a matrix", "args": {**_OK, "y": [[0.0], [1.0]]}},
    {"why": "w as a tree", "args": {**_OK, "w": {"w": [1.0, -1.0]}}},
    {"why": "rows wider than w", "args": {**_OK, "x": [[1.0, 0.0, 2.0], [2.0, 1.0, 0.0]]}},
    {"why": "one target too many", "args": {**_OK, "y": [0.0, 1.0, 2.0]}},
    {"why": "no weight", "args": {"w": [], "x": [[], []], "y": [0.0, 1.0], "max_norm": 1.0}},
    {"why": "too many weights", "args": {"w": [0.0] * 65, "x": [[0.0] * 65], "y": [0.0], "max_norm": 1.0}},
    {
        "why": "too many numbers",
        "args": {"w": [0.0] * 64, "x": [[0.0] * 64] * 64, "y": [0.0] * 64, "max_norm": 1.0},
    },
    {"why": "a value past the bound", "args": {**_OK, "x": [[1.0, 0.0], [2e4, 1.0]]}},
    {"why": "an infinite target", "args": {**_OK, "y": [0.0, float("inf")]}},
    {"why": "a NaN weight", "args": {**_OK, "w": [float("nan"), 1.0]}},
    {"why": "zero max_norm", "args": {**_OK, "max_norm": 0.0}},
    {"why": "negative max_norm", "args": {**_OK, "max_norm": -1.0}},
    {"why": "max_norm past the bound", "args": {**_OK, "max_norm": 1e5}},
    {"why": "max_norm as a list", "args": {**_OK, "max_norm": [1.0]}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "largest values, largest max_norm",
        "args": {"w": [1e4] * 64, "x": [[1e4] * 64] * 60, "y": [-1e4] * 60, "max_norm": 1e4},
    },
    {
        "why": "largest batch",
        "args": {"w": [1e4] * 14, "x": [[-1e4] * 14] * 256, "y": [1e4] * 256, "max_norm": 1e4},
    },
    {"why": "every example fitted exactly", "args": {**_OK, "y": [1.0, 1.0], "max_norm": 1e-30}},
    {"why": "tiny max_norm", "args": {**_OK, "max_norm": 1e-30}},
]
