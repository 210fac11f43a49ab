"""Constraints of functional-array-update (statement.md, "Constraints"), checked on every case by
`judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_finite, check_int_range, check_max_abs, check_max_elements

#: Largest magnitude of any value.
MAX_ABS = 1000.0
#: Most rows (and columns) of x, and most entries of each index array.
MAX_ROWS = 64
MAX_INDICES = 64
#: Most numbers of one case, all arrays together.
MAX_ELEMENTS = 4000
NAMES = ("x", "set_idx", "set_rows", "add_idx", "add_rows")


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    x = args["x"]
    n = int(x.shape[0])
    errors: list[str] = []
    if not 1 <= n <= MAX_ROWS:
        errors.append(f"x: {n} rows, 1 to {MAX_ROWS} allowed")
    if x.ndim == 2 and not 1 <= x.shape[1] <= MAX_ROWS:
        errors.append(f"x: {x.shape[1]} columns, 1 to {MAX_ROWS} allowed")
    errors += check_max_elements({name: args[name] for name in NAMES}, MAX_ELEMENTS)
    for idx_name, rows_name in (("set_idx", "set_rows"), ("add_idx", "add_rows")):
        idx, rows = args[idx_name], args[rows_name]
        if not 1 <= idx.shape[0] <= MAX_INDICES:
            errors.append(f"{idx_name}: {idx.shape[0]} entries, 1 to {MAX_INDICES} allowed")
        want = (int(idx.shape[0]), *x.shape[1:])
        if rows.shape != want:
            errors.append(f"{rows_name}: shape {rows.shape}, expected {want} (one row of x per index)")
        if n >= 1:
            errors += check_int_range(idx, idx_name, ge=-2 * n, le=2 * n - 1)
    for name in ("x", "set_rows", "add_rows"):
        errors += check_finite(args[name], name)
        errors += check_max_abs(args[name], name, MAX_ABS)
    if not errors:
        idx = args["set_idx"].astype(np.int64)
        rows = np.where(idx < 0, idx + n, idx)
        named = rows[(rows >= 0) & (rows < n)]
        values, counts = np.unique(named, return_counts=True)
        if (counts > 1).any():
            row = int(values[counts > 1][0])
            errors.append(f"set_idx: names row {row} more than once (each row may be set once)")
    return errors


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def _rows(idx: Any, n: int) -> Any:
    """The rows the indices mean, -1 where out of range."""
    idx = np.asarray(idx, dtype=np.int64)
    rows = np.where(idx < 0, idx + n, idx)
    return np.where((rows >= 0) & (rows < n), rows, -1)


def overwritten_by_far_smaller(args: dict[str, Any], dtype: str) -> bool:
    """A row of magnitude 100 or more set to a row at least 1,000 times smaller."""
    x = np.abs(np.asarray(args["x"], dtype=np.float64))
    new = np.abs(np.asarray(args["set_rows"], dtype=np.float64))
    for j, row in enumerate(_rows(args["set_idx"], x.shape[0])):
        if row >= 0 and x[row].min() >= 100.0 and new[j].max() * 1000.0 <= x[row].min():
            return True
    return False


def row_set_and_added(args: dict[str, Any], dtype: str) -> bool:
    n = args["x"].shape[0]
    both = set(_rows(args["set_idx"], n).tolist()) & set(_rows(args["add_idx"], n).tolist())
    return bool(both - {-1})


def minus_n_minus_one(args: dict[str, Any], dtype: str) -> bool:
    n = args["x"].shape[0]
    return any(int(v) == -n - 1 for name in ("set_idx", "add_idx") for v in args[name])


def minus_one(args: dict[str, Any], dtype: str) -> bool:
    return any(int(v) == -1 for name in ("set_idx", "add_idx") for v in args[name])


def out_of_range(args: dict[str, Any], dtype: str) -> bool:
    n = args["x"].shape[0]
    return any((_rows(args[name], n) < 0).any() for name in ("set_idx", "add_idx"))


def repeated_add(args: dict[str, Any], dtype: str) -> bool:
    rows = _rows(args["add_idx"], args["x"].shape[0])
    rows = rows[rows >= 0]
    return bool(len(np.unique(rows)) < len(rows))


_OK: dict[str, Any] = {
    "x": [1.0, 2.0, 3.0, 4.0],
    "set_idx": [0, -1],
    "set_rows": [10.0, 40.0],
    "add_idx": [1, 1],
    "add_rows": [0.5, 0.25],
}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "0-d x", "args": {**_OK, "x": 1.0}},
    {"why": "3-d x", "args": {**_OK, "x": [[[1.0]]]}},
    {"why": "a row set twice", "args": {**_OK, "set_idx": [1, -3]}},
    {"why": "index below -2n", "args": {**_OK, "add_idx": [-9, 0]}},
    {"why": "index at 2n", "args": {**_OK, "add_idx": [8, 0]}},
    {"why": "fractional index", "args": {**_OK, "set_idx": [0.5, 1]}},
    {"why": "boolean index", "args": {**_OK, "set_idx": [True, False]}},
    {"why": "rows of the wrong count", "args": {**_OK, "set_rows": [10.0]}},
    {
        "why": "rows of the wrong width",
        "args": {**_OK, "x": [[1.0, 2.0]], "set_idx": [0], "set_rows": [[1.0]]},
    },
    {"why": "value past the bound", "args": {**_OK, "add_rows": [0.5, 2000.0]}},
    {"why": "too many rows", "args": {**_OK, "x": [0.0] * 65}},
    {"why": "too many indices", "args": {**_OK, "add_idx": [0] * 65, "add_rows": [1.0] * 65}},
    {
        "why": "too many numbers in all",
        "args": {
            "x": [[0.0] * 64] * 62,
            "set_idx": [0],
            "set_rows": [[1.0] * 64],
            "add_idx": [1],
            "add_rows": [[1.0] * 64],
        },
    },
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "indices at both ends of the range", "args": {**_OK, "set_idx": [-8, 7], "add_idx": [-8, 7]}},
    {
        "why": "largest magnitudes",
        "args": {**_OK, "x": [1000.0, -1000.0, 0.0, 1.0], "add_rows": [1000.0, 1000.0]},
    },
    {
        "why": "one row",
        "args": {
            "x": [[5.0, 6.0]],
            "set_idx": [-1],
            "set_rows": [[1.0, 2.0]],
            "add_idx": [0],
            "add_rows": [[1.0, 1.0]],
        },
    },
    {
        "why": "64 indices into 64 rows",
        "args": {
            "x": [0.0] * 64,
            "set_idx": list(range(64)),
            "set_rows": [1.0] * 64,
            "add_idx": [5] * 64,
            "add_rows": [0.5] * 64,
        },
    },
]
