"""Constraints of remat-tanh-stack (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_dtype, check_finite, check_max_abs

#: Largest magnitude of any entry: a product of 32 such terms stays far inside float32.
MAX_ABS = 4.0
MAX_LAYERS = 16
MAX_ROWS = 32
MAX_FEATURES = 32


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    ws, x = np.asarray(args["ws"]), np.asarray(args["x"])
    errors: list[str] = []
    if ws.ndim == 3 and x.ndim == 2:
        layers, d_in, d_out = ws.shape
        rows, features = x.shape
        if not 1 <= layers <= MAX_LAYERS:
            errors.append(f"ws: {layers} layers, needs 1 to {MAX_LAYERS}")
        if d_in != d_out:
            errors.append(f"ws: layers of shape ({d_in}, {d_out}), need (d, d)")
        if not 1 <= features <= MAX_FEATURES:
            errors.append(f"x: {features} features, needs 1 to {MAX_FEATURES}")
        if not 1 <= rows <= MAX_ROWS:
            errors.append(f"x: {rows} rows, needs 1 to {MAX_ROWS}")
        if d_in != features:
            errors.append(f"ws: layers of shape ({d_in}, {d_out}), x has {features} features")
    return [
        *errors,
        *check_dtype(ws, "ws", dtype),
        *check_dtype(x, "x", dtype),
        *check_finite(ws, "ws"),
        *check_finite(x, "x"),
        *check_max_abs(ws, "ws", MAX_ABS),
        *check_max_abs(x, "x", MAX_ABS),
    ]


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def one_layer(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["ws"]).shape[0] == 1)


def most_layers(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["ws"]).shape[0] == MAX_LAYERS)


def one_row(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["x"]).shape[0] == 1)


def most_rows(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["x"]).shape[0] == MAX_ROWS)


def one_feature(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["x"]).shape[1] == 1)


def most_features(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["x"]).shape[1] == MAX_FEATURES)


_OK = {"ws": [[[1.0, 0.0], [0.0, 1.0]]], "x": [[0.5, -0.5]]}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "ws with 2 dimensions", "args": {**_OK, "ws": [[1.0, 0.0], [0.0, 1.0]]}},
    {"why": "x with 1 dimension", "args": {**_OK, "x": [0.5, -0.5]}},
    {"why": "no layers", "args": {**_OK, "ws": np.zeros((0, 2, 2)).tolist()}},
    {"why": "17 layers", "args": {**_OK, "ws": np.zeros((17, 2, 2)).tolist()}},
    {"why": "non-square layer", "args": {**_OK, "ws": [[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]}},
    {"why": "x of another width", "args": {**_OK, "x": [[0.5, -0.5, 1.0]]}},
    {"why": "no rows", "args": {**_OK, "x": np.zeros((0, 2)).tolist()}},
    {"why": "33 rows", "args": {**_OK, "x": np.zeros((33, 2)).tolist()}},
    {"why": "33 features", "args": {"ws": np.zeros((1, 33, 33)).tolist(), "x": np.zeros((1, 33)).tolist()}},
    {"why": "entry past the bound", "args": {**_OK, "x": [[4.5, 0.0]]}},
    {"why": "NaN weight", "args": {**_OK, "ws": [[[float("nan"), 0.0], [0.0, 1.0]]]}},
    {"why": "string entry", "args": {**_OK, "x": [["0.5", "1"]]}},
    {"why": "bfloat16 case", "dtype": "bfloat16", "args": _OK},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "largest entries, both signs",
        "args": {"ws": [[[4.0, -4.0], [-4.0, 4.0]]] * 16, "x": [[4.0, -4.0]]},
    },
    {"why": "one feature, one layer", "args": {"ws": [[[-4.0]]], "x": [[4.0]]}},
    {
        "why": "largest shapes",
        "args": {"ws": np.full((16, 32, 32), 0.125).tolist(), "x": np.full((32, 32), -1.0).tolist()},
    },
]
