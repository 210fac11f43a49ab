"""Constraints of device-mesh-sharding (statement.md, "Constraints"), checked on every case by judge check."""

from __future__ import annotations

from typing import Any

from judge.constraints import check_finite, check_int, check_max_abs, check_max_elements

#: Rows of x: a multiple of the 4 devices of the mesh's `data` axis, so each holds as many rows.
ROWS_MULTIPLE, MAX_ROWS = 4, 64
MAX_INNER = 32
#: Columns of w: a multiple of the 2 devices of the `model` axis.
COLUMNS_MULTIPLE, MAX_COLUMNS = 2, 64
MAX_ELEMENTS = 4096
#: Largest magnitude of an input: a row of y sums at most 32 products of 1e4.
MAX_ABS = 100.0


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    x, w = args["x"], args["w"]
    (b, d), (e, h) = x.shape, w.shape
    errors = [
        *check_int(b, "x rows (b)", ge=ROWS_MULTIPLE, le=MAX_ROWS),
        *check_int(d, "x columns (d)", ge=1, le=MAX_INNER),
        *check_int(h, "w columns (h)", ge=COLUMNS_MULTIPLE, le=MAX_COLUMNS),
    ]
    if b % ROWS_MULTIPLE:
        errors.append(f"x: {b} rows, must be a multiple of {ROWS_MULTIPLE} (the data axis)")
    if h % COLUMNS_MULTIPLE:
        errors.append(f"w: {h} columns, must be a multiple of {COLUMNS_MULTIPLE} (the model axis)")
    if e != d:
        errors.append(f"w: {e} rows, expected {d} (the columns of x)")
    errors += check_max_elements({"x": x, "w": w}, MAX_ELEMENTS)
    errors += check_finite(x, "x") + check_finite(w, "w")
    errors += check_max_abs(x, "x", MAX_ABS) + check_max_abs(w, "w", MAX_ABS)
    return errors


def _filled(rows: int, columns: int, value: float) -> list[list[float]]:
    return [[value] * columns for _ in range(rows)]


_OK: dict[str, Any] = {"x": _filled(4, 2, 1.0), "w": _filled(2, 2, 0.5)}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "rows not a multiple of 4", "args": {**_OK, "x": _filled(6, 2, 1.0)}},
    {"why": "too few rows", "args": {**_OK, "x": []}},
    {"why": "too many rows", "args": {**_OK, "x": _filled(68, 2, 1.0)}},
    {"why": "odd columns", "args": {**_OK, "w": _filled(2, 3, 0.5)}},
    {"why": "too many columns", "args": {**_OK, "w": _filled(2, 66, 0.5)}},
    {"why": "inner sizes differ", "args": {**_OK, "w": _filled(3, 2, 0.5)}},
    {"why": "no inner dimension", "args": {"x": [[], [], [], []], "w": []}},
    {"why": "inner dimension too long", "args": {"x": _filled(4, 33, 1.0), "w": _filled(33, 2, 1.0)}},
    {"why": "too many numbers", "args": {"x": _filled(64, 32, 1.0), "w": _filled(32, 66, 1.0)}},
    {
        "why": "a value past the bound",
        "args": {**_OK, "x": [[1.0, 1.0], [1.0, 101.0], [1.0, 1.0], [1.0, 1.0]]},
    },
    {"why": "an infinite value", "args": {**_OK, "w": [[1.0, float("inf")], [0.0, 0.0]]}},
    {"why": "a NaN", "args": {**_OK, "w": [[1.0, float("nan")], [0.0, 0.0]]}},
    {"why": "x of rank 1", "args": {**_OK, "x": [1.0, 2.0, 3.0, 4.0]}},
    {"why": "w of rank 3", "args": {**_OK, "w": [[[0.5, 0.5]], [[0.5, 0.5]]]}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "the most numbers, every value at the bound",
        "args": {"x": _filled(64, 32, MAX_ABS), "w": _filled(32, 64, -MAX_ABS)},
    },
    {"why": "the smallest shapes", "args": {"x": _filled(4, 1, 1.0), "w": _filled(1, 2, -1.0)}},
]
