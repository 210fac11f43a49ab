"""Constraints of rotary-embedding (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_finite, check_int, check_int_range, check_max_abs, check_max_elements

#: Largest magnitude of any entry of x.
MAX_ABS = 1e4
#: Tokens, heads and head size: T at most 256, H at most 8, D even from 2 to 128.
MAX_TOKENS, MAX_HEADS, MAX_HEAD_DIM = 256, 8, 128
#: Elements of x at most (with 256 positions, 4096 numbers in a case).
MAX_ELEMENTS = 3840
#: Positions: a context of 4096 tokens.
MAX_POSITION = 4095


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    x, positions = args["x"], args["positions"]
    tokens, heads, head_dim = x.shape
    errors = check_int(tokens, "x: tokens T", ge=1, le=MAX_TOKENS)
    errors += check_int(heads, "x: heads H", ge=1, le=MAX_HEADS)
    errors += check_int(head_dim, "x: head size D", ge=2, le=MAX_HEAD_DIM)
    if head_dim % 2:
        errors.append(f"x: head size D = {head_dim}, must be even (the entries are rotated in pairs)")
    errors += check_max_elements({"x": x}, MAX_ELEMENTS)
    errors += check_finite(x, "x") + check_max_abs(x, "x", MAX_ABS)
    if positions.shape != (tokens,):
        errors.append(f"positions: shape {positions.shape}, expected ({tokens},): one position per token")
    return errors + check_int_range(positions, "positions", ge=0, le=MAX_POSITION)


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def table_roundings_add_up(args: dict[str, Any], dtype: str) -> bool:
    """float32 x where, for some token, bfloat16 roundings of cos p and sin p (pair 0) add up in y_0 to 0.9
    of their largest possible size, 2^-8 of the inputs' magnitude."""
    import ml_dtypes

    if dtype != "float32":
        return False
    x = np.asarray(args["x"], dtype=np.float64)
    half = x.shape[-1] // 2
    p = np.asarray(args["positions"]).astype(np.float32).astype(np.float64)
    c, s = np.cos(p).astype(np.float32), np.sin(p).astype(np.float32)
    dc = c.astype(ml_dtypes.bfloat16).astype(np.float64) - c
    ds = s.astype(ml_dtypes.bfloat16).astype(np.float64) - s
    a, b = x[..., 0], x[..., half]
    err = np.abs(a * dc[:, None] - b * ds[:, None])
    return bool(err.max() >= 0.9 * 2.0**-8 * np.abs(x).max())


def bf16_late_positions(args: dict[str, Any], dtype: str) -> bool:
    return dtype == "bfloat16" and int(np.max(args["positions"])) == MAX_POSITION


def positions_repeat_out_of_order(args: dict[str, Any], dtype: str) -> bool:
    p = np.asarray(args["positions"])
    return len(np.unique(p)) < len(p) and bool((np.diff(p) < 0).any())


def positions_late_start(args: dict[str, Any], dtype: str) -> bool:
    return int(args["positions"][0]) > 0


_X = [[[1.0, 2.0, 3.0, 4.0]], [[1.0, 2.0, 3.0, 4.0]]]
_OK: dict[str, Any] = {"x": _X, "positions": [0, 1]}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "odd head size", "args": {**_OK, "x": [[[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]]]}},
    {"why": "one position too many", "args": {**_OK, "positions": [0, 1, 2]}},
    {"why": "negative position", "args": {**_OK, "positions": [-1, 0]}},
    {"why": "position past the context", "args": {**_OK, "positions": [0, 4096]}},
    {"why": "fractional position", "args": {**_OK, "positions": [0, 1.5]}},
    {"why": "positions as a scalar", "args": {**_OK, "positions": 0}},
    {"why": "x of rank 2", "args": {**_OK, "x": [[1.0, 2.0], [3.0, 4.0]]}},
    {"why": "nine heads", "args": {"x": [[[1.0, 2.0]] * 9], "positions": [0]}},
    {"why": "head size past 128", "args": {"x": [[[1.0] * 130]], "positions": [0]}},
    {"why": "value past the bound", "args": {**_OK, "x": [[[1.0, 2.0, 3.0, 2e4]], [[1.0, 2.0, 3.0, 4.0]]]}},
    {"why": "too many elements", "args": {"x": [[[1.0] * 128] * 8] * 4, "positions": [0, 1, 2, 3]}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "largest values at the last position",
        "args": {"x": [[[MAX_ABS, -MAX_ABS]]], "positions": [4095]},
    },
    {
        "why": "256 tokens, positions 0 to 255",
        "args": {"x": [[[0.5] * 14]] * 256, "positions": list(range(256))},
    },
    {
        "why": "widest heads, bfloat16",
        "dtype": "bfloat16",
        "args": {"x": [[[1.5] * 128] * 8] * 3, "positions": [0, 2048, 4095]},
    },
]
