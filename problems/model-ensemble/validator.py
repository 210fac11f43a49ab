"""Constraints of model-ensemble (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_dtype, check_finite, check_int, check_max_abs, check_max_elements

#: Largest magnitude of any value: a hidden unit is at most 16 * 100 * 100 + 100 = 160,100 and an output
#: at most 32 * 160,100 * 100 + 100, about 5e8, far inside float32.
MAX_ABS = 100.0
MIN_E, MAX_E, MIN_N, MAX_N, MAX_D, MAX_H, MAX_K = 2, 8, 2, 64, 16, 32, 8
MAX_ELEMENTS = 4096
KEYS = ("w1", "b1", "w2", "b2")


def _shapes(params: Any, x: Any) -> list[str]:
    if not isinstance(params, dict) or set(params) != set(KEYS):
        keys = sorted(params) if isinstance(params, dict) else type(params).__name__
        return [f'params: expected a dict with the keys "b1", "b2", "w1" and "w2", got {keys}']
    if not all(isinstance(params[key], np.ndarray) for key in KEYS):
        return ["params: every entry must be an array"]
    w1, w2 = params["w1"], params["w2"]
    if w1.ndim != 3 or w2.ndim != 3:
        return [
            f'params["w1"], params["w2"]: expected shapes (E, d, h) and (E, h, k), got {w1.shape}, {w2.shape}'
        ]
    (e, d, h), k, n = w1.shape, w2.shape[2], x.shape[0]
    errors = [
        *check_int(e, "params: the ensemble size E", ge=MIN_E, le=MAX_E),
        *check_int(n, "x: the number of examples n", ge=MIN_N, le=MAX_N),
        *check_int(d, 'params["w1"]: the input size d', ge=1, le=MAX_D),
        *check_int(h, 'params["w1"]: the hidden size h', ge=1, le=MAX_H),
        *check_int(k, 'params["w2"]: the output size k', ge=1, le=MAX_K),
    ]
    expected = {"b1": (e, h), "w2": (e, h, k), "b2": (e, k)}
    for key, shape in expected.items():
        if params[key].shape != shape:
            errors.append(
                f'params["{key}"]: shape {params[key].shape}, expected {shape} (E, h from w1; k from w2)'
            )
    if x.shape[1] != d:
        errors.append(f'x: shape {x.shape}, expected (n, {d}): d of params["w1"]')
    return errors


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    params, x = args["params"], args["x"]
    errors = _shapes(params, x)
    for name in ("params", "x"):
        errors += check_dtype(args[name], name, dtype)
        errors += check_finite(args[name], name)
        errors += check_max_abs(args[name], name, MAX_ABS)
    errors += check_max_elements(args, MAX_ELEMENTS)
    return errors


def _params(e: int, d: int, h: int, k: int, value: float = 0.5) -> dict[str, Any]:
    return {
        "w1": [[[value] * h] * d] * e,
        "b1": [[value] * h] * e,
        "w2": [[[value] * k] * h] * e,
        "b2": [[value] * k] * e,
    }


_OK: dict[str, Any] = {"params": _params(2, 2, 3, 1), "x": [[1.0, 0.0], [0.0, 1.0]]}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "params as a bare array", "args": {**_OK, "params": [[[1.0]]]}},
    {
        "why": "params without b2",
        "args": {**_OK, "params": {k: v for k, v in _params(2, 2, 3, 1).items() if k != "b2"}},
    },
    {
        "why": "params with an extra key",
        "args": {**_OK, "params": {**_params(2, 2, 3, 1), "w3": [[[1.0]]] * 2}},
    },
    {
        "why": "w1 without the member axis",
        "args": {**_OK, "params": {**_params(2, 2, 3, 1), "w1": [[0.5] * 3] * 2}},
    },
    {
        "why": "b1 of another ensemble size",
        "args": {**_OK, "params": {**_params(2, 2, 3, 1), "b1": [[0.5] * 3] * 3}},
    },
    {
        "why": "w2 of another hidden size",
        "args": {**_OK, "params": {**_params(2, 2, 3, 1), "w2": [[[0.5]] * 4] * 2}},
    },
    {
        "why": "b2 of another output size",
        "args": {**_OK, "params": {**_params(2, 2, 3, 1), "b2": [[0.5, 0.5]] * 2}},
    },
    {"why": "x with the wrong d", "args": {**_OK, "x": [[1.0], [0.0]]}},
    {"why": "x as a vector", "args": {**_OK, "x": [1.0, 0.0]}},
    {"why": "one example", "args": {**_OK, "x": [[1.0, 0.0]]}},
    {"why": "NaN in x", "args": {**_OK, "x": [[1.0, float("nan")], [0.0, 1.0]]}},
    {"why": "a weight past the bound", "args": {**_OK, "params": _params(2, 2, 3, 1, value=101.0)}},
    {"why": "one member", "args": {"params": _params(1, 2, 3, 1), "x": [[1.0, 0.0], [0.0, 1.0]]}},
    {"why": "9 members", "args": {"params": _params(9, 1, 1, 1), "x": [[1.0], [2.0]]}},
    {"why": "65 examples", "args": {"params": _params(2, 1, 1, 1), "x": [[1.0]] * 65}},
    {"why": "d = 17", "args": {"params": _params(2, 17, 1, 1), "x": [[1.0] * 17] * 2}},
    {"why": "h = 33", "args": {"params": _params(2, 1, 33, 1), "x": [[1.0]] * 2}},
    {"why": "k = 9", "args": {"params": _params(2, 1, 1, 9), "x": [[1.0]] * 2}},
    {"why": "more than 4096 numbers", "args": {"params": _params(8, 16, 32, 8), "x": [[1.0] * 16] * 2}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "every value at the bound, the largest outputs",
        "args": {"params": _params(2, 16, 32, 8, value=MAX_ABS), "x": [[MAX_ABS] * 16] * 64},
    },
    {"why": "two members, smallest network", "args": {"params": _params(2, 1, 1, 1), "x": [[1.0], [-2.0]]}},
    {
        "why": "every hidden unit off (ReLU gives 0)",
        "args": {"params": _params(8, 1, 1, 1, value=-1.0), "x": [[3.0], [1.0]]},
    },
    {"why": "the most members", "args": {"params": _params(8, 4, 8, 4), "x": [[0.25] * 4] * 8}},
]
