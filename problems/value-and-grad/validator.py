"""Constraints of value-and-grad (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_dtype, check_finite, check_int, check_max_abs, check_max_elements

#: Largest magnitude of any value: a prediction is at most 32 * 100 * 100 + 100 = 320,100, so the loss
#: (at most 8 squared residuals per example) stays near 4e11, far inside float32.
MAX_ABS = 100.0
MAX_N, MAX_D, MAX_K = 128, 32, 8
MAX_ELEMENTS = 4096


def _shapes(params: Any, x: Any, y: Any) -> list[str]:
    if not isinstance(params, dict) or set(params) != {"w", "b"}:
        keys = sorted(params) if isinstance(params, dict) else type(params).__name__
        return [f'params: expected a dict with the keys "b" and "w", got {keys}']
    w, b = params["w"], params["b"]
    if not isinstance(w, np.ndarray) or w.ndim != 2:
        return [f'params["w"]: expected a matrix of shape (d, k), got {np.shape(w)}']
    (d, k), (n, x_d), (y_n, y_k) = w.shape, x.shape, y.shape
    errors = [
        *check_int(n, "x: the number of examples n", ge=1, le=MAX_N),
        *check_int(d, 'params["w"]: the input size d', ge=1, le=MAX_D),
        *check_int(k, 'params["w"]: the output size k', ge=1, le=MAX_K),
    ]
    if not isinstance(b, np.ndarray) or b.shape != (k,):
        errors.append(f'params["b"]: shape {np.shape(b)}, expected ({k},): k of params["w"]')
    if x_d != d:
        errors.append(f'x: shape {x.shape}, expected (n, {d}): d of params["w"]')
    if (y_n, y_k) != (n, k):
        errors.append(f'y: shape {y.shape}, expected ({n}, {k}): n of x and k of params["w"]')
    return errors


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    params, x, y = args["params"], args["x"], args["y"]
    errors = _shapes(params, x, y)
    for name in ("params", "x", "y"):
        errors += check_dtype(args[name], name, dtype)
        errors += check_finite(args[name], name)
        errors += check_max_abs(args[name], name, MAX_ABS)
    errors += check_max_elements(args, MAX_ELEMENTS)
    return errors


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def near_fit_large_predictions(args: dict[str, Any], dtype: str) -> bool:
    """Every residual within 1/4 while some prediction is 50 or more in magnitude: a perfect or near-perfect
    fit where the squares of the predictions dwarf the loss."""
    params = args["params"]
    w, b = (np.asarray(params[k], dtype=np.float64) for k in ("w", "b"))
    prediction = np.asarray(args["x"], dtype=np.float64) @ w + b
    residual = prediction - np.asarray(args["y"], dtype=np.float64)
    return bool(np.abs(residual).max() <= 0.25 and np.abs(prediction).max() >= 50.0)


_OK: dict[str, Any] = {
    "params": {"w": [[1.0], [2.0]], "b": [0.5]},
    "x": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
    "y": [[1.0], [2.0], [3.0]],
}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "params as a bare array", "args": {**_OK, "params": [[1.0], [2.0]]}},
    {"why": "params without b", "args": {**_OK, "params": {"w": [[1.0], [2.0]]}}},
    {"why": "params with an extra key", "args": {**_OK, "params": {**_OK["params"], "c": [1.0]}}},
    {"why": "w as a vector", "args": {**_OK, "params": {"w": [1.0, 2.0], "b": [0.5]}}},
    {"why": "b of the wrong length", "args": {**_OK, "params": {"w": [[1.0], [2.0]], "b": [0.5, 0.5]}}},
    {"why": "b as a matrix", "args": {**_OK, "params": {"w": [[1.0], [2.0]], "b": [[0.5]]}}},
    {"why": "x with the wrong d", "args": {**_OK, "x": [[1.0], [0.0], [1.0]]}},
    {"why": "y with the wrong n", "args": {**_OK, "y": [[1.0], [2.0]]}},
    {"why": "y with the wrong k", "args": {**_OK, "y": [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]}},
    {"why": "x as a vector", "args": {**_OK, "x": [1.0, 0.0]}},
    {"why": "no example", "args": {**_OK, "x": [], "y": []}},
    {"why": "NaN in y", "args": {**_OK, "y": [[1.0], [float("nan")], [3.0]]}},
    {"why": "a weight past the bound", "args": {**_OK, "params": {"w": [[1.0], [101.0]], "b": [0.5]}}},
    {"why": "an input past the bound", "args": {**_OK, "x": [[1.0, 0.0], [0.0, -1e3], [1.0, 1.0]]}},
    {
        "why": "k = 9 outputs",
        "args": {"params": {"w": [[1.0] * 9], "b": [0.0] * 9}, "x": [[1.0]], "y": [[1.0] * 9]},
    },
    {
        "why": "d = 33 inputs",
        "args": {"params": {"w": [[1.0]] * 33, "b": [0.0]}, "x": [[1.0] * 33], "y": [[1.0]]},
    },
    {
        "why": "129 examples",
        "args": {"params": {"w": [[1.0]], "b": [0.0]}, "x": [[1.0]] * 129, "y": [[1.0]] * 129},
    },
    {
        "why": "more than 4096 numbers",
        "args": {"params": {"w": [[1.0]] * 32, "b": [0.0]}, "x": [[1.0] * 32] * 128, "y": [[1.0]] * 128},
    },
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "every value at the bound, the largest residuals",
        "args": {
            "params": {"w": [[MAX_ABS] * 8] * 32, "b": [MAX_ABS] * 8},
            "x": [[MAX_ABS] * 32] * 94,
            "y": [[-MAX_ABS] * 8] * 94,
        },
    },
    {
        "why": "one example, one input, one output",
        "args": {"params": {"w": [[0.5]], "b": [-0.25]}, "x": [[2.0]], "y": [[0.75]]},
    },
    {
        "why": "the most examples",
        "args": {"params": {"w": [[1.0]] * 4, "b": [0.0]}, "x": [[0.5] * 4] * 128, "y": [[1.0]] * 128},
    },
    {
        "why": "a perfect fit: loss and gradient 0",
        "args": {"params": {"w": [[2.0]], "b": [1.0]}, "x": [[1.0], [3.0]], "y": [[3.0], [7.0]]},
    },
]
