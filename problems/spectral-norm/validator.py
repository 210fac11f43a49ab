"""Constraints of spectral-norm (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_finite, check_int, check_max_abs

MAX_ROWS = 256
MAX_COLUMNS = 256
MAX_ITERS = 100
#: Largest magnitude of any value: w.T @ u0 then stays below 2.6e8 per entry and its squared norm below
#: 1.7e19, far inside float32's range, and a normalised iteration never grows.
MAX_ABS = 1000.0
#: Every nonzero vector normalised along the way keeps at least this fraction of ||w||_F * ||input||:
#: a vector that is nearly zero only by cancellation holds rounding noise, which no two correct float32
#: programs compute alike.
MIN_RATIO = 1e-3
#: ... and has norm at least this much: its squared norm stays far from float32's underflow (1.2e-38).
MIN_NORM = 1e-15


def _normalized(
    x: np.ndarray[Any, Any], source: np.ndarray[Any, Any], frobenius: float, what: str
) -> tuple[np.ndarray[Any, Any], list[str]]:
    """``x / ||x||`` (zero stays zero), or a violation when ``x`` is nonzero but tiny next to its source."""
    norm = float(np.linalg.norm(x))
    bound = max(MIN_NORM, MIN_RATIO * frobenius * float(np.linalg.norm(source)))
    if 0.0 < norm < bound:
        return x, [
            f"u0: {what} has norm {norm:.3g}, nonzero but below max({MIN_NORM:g}, {MIN_RATIO:g} * ||w||_F * "
            f"||input||) = {bound:.3g}: its digits would be rounding noise; choose another u0 or w"
        ]
    return (x / norm if norm > 0 else np.zeros_like(x)), []


def _conditioning(w: np.ndarray[Any, Any], u0: np.ndarray[Any, Any], num_iters: int) -> list[str]:
    """The power iteration in float64: u0 and every vector normalised along the way is exactly zero or
    has norm at least ``MIN_NORM`` and ``MIN_RATIO * ||w||_F * ||the vector it was computed from||``."""
    norm0 = float(np.linalg.norm(u0))
    if 0.0 < norm0 < MIN_NORM:
        return [f"u0: norm {norm0:.3g}, nonzero but below {MIN_NORM:g}"]
    frobenius = float(np.linalg.norm(w))
    u = u0
    for it in range(1, num_iters + 1):
        v, errors = _normalized(w.T @ u, u, frobenius, f"w.T @ u in iteration {it}")
        if errors:
            return errors
        u_next, errors = _normalized(w @ v, v, frobenius, f"w @ v in iteration {it}")
        if errors:
            return errors
        u = u_next
    return []


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    w, u0, num_iters = args["w"], args["u0"], args["num_iters"]
    errors: list[str] = []
    m, n = w.shape
    if not 1 <= m <= MAX_ROWS:
        errors.append(f"w: {m} rows, 1 to {MAX_ROWS} allowed")
    if not 1 <= n <= MAX_COLUMNS:
        errors.append(f"w: {n} columns, 1 to {MAX_COLUMNS} allowed")
    if u0.shape != (m,):
        errors.append(f"u0: shape {u0.shape}, expected ({m},): one entry per row of w")
    errors += check_finite(w, "w") + check_finite(u0, "u0")
    errors += check_max_abs(w, "w", MAX_ABS) + check_max_abs(u0, "u0", MAX_ABS)
    errors += check_int(num_iters, "num_iters", ge=1, le=MAX_ITERS)
    if errors:
        return errors
    return _conditioning(np.asarray(w, np.float64), np.asarray(u0, np.float64), num_iters)


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def zero_vector_on_the_way(args: dict[str, Any], dtype: str) -> bool:
    """u0 is zero, or W^T u0 is exactly zero: the "exactly zero" branch of the iteration."""
    w = np.asarray(args["w"], dtype=np.float64)
    u0 = np.asarray(args["u0"], dtype=np.float64)
    return bool(not np.any(u0) or not np.any(w.T @ u0))


_OK = {"w": [[2.0, 1.0], [0.0, 1.0]], "u0": [1.0, 0.0], "num_iters": 1}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "w as a vector", "args": {**_OK, "w": [2.0, 1.0]}},
    {"why": "w as a 3-D array", "args": {**_OK, "w": [[[2.0, 1.0], [0.0, 1.0]]]}},
    {"why": "w as a tree", "args": {**_OK, "w": {"kernel": [[2.0, 1.0], [0.0, 1.0]]}}},
    {"why": "u0 as a matrix", "args": {**_OK, "u0": [[1.0, 0.0]]}},
    {"why": "u0 as a number", "args": {**_OK, "u0": 1.0}},
    {
        "why": "u0 with one entry per column of a wide w",
        "args": {**_OK, "w": [[1.0, 2.0, 3.0]], "u0": [1.0, 0.0, 0.0]},
    },
    {"why": "w without rows", "args": {**_OK, "w": [], "u0": []}},
    {"why": "w without columns", "args": {**_OK, "w": [[], []]}},
    {"why": "too many rows", "args": {**_OK, "w": [[1.0]] * 257, "u0": [1.0] * 257}},
    {"why": "too many columns", "args": {**_OK, "w": [[1.0] * 257], "u0": [1.0]}},
    {"why": "a value past the bound", "args": {**_OK, "w": [[2000.0, 1.0], [0.0, 1.0]]}},
    {"why": "an infinite start", "args": {**_OK, "u0": [float("inf"), 0.0]}},
    {"why": "a NaN in w", "args": {**_OK, "w": [[float("nan"), 1.0], [0.0, 1.0]]}},
    {"why": "zero iterations", "args": {**_OK, "num_iters": 0}},
    {"why": "too many iterations", "args": {**_OK, "num_iters": 101}},
    {"why": "fractional iterations", "args": {**_OK, "num_iters": 1.5}},
    {"why": "iterations as a list", "args": {**_OK, "num_iters": [3]}},
    {
        "why": "w.T @ u0 nearly zero by cancellation",
        "args": {**_OK, "w": [[1.0, 1.0], [1.0, 1.0000001]], "u0": [1.0, -1.0]},
    },
    {"why": "w.T @ u0 below float32's safe range", "args": {**_OK, "w": [[1e-20, 0.0], [0.0, 1e-20]]}},
    {"why": "a tiny start vector", "args": {**_OK, "u0": [1e-20, 0.0]}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "the zero matrix",
        "args": {"w": [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], "u0": [1.0, 2.0, 3.0], "num_iters": 3},
    },
    {"why": "a zero start vector", "args": {**_OK, "u0": [0.0, 0.0], "num_iters": 5}},
    {
        "why": "every value at the bound, the largest matrix, the most iterations",
        "args": {"w": [[1000.0] * MAX_COLUMNS] * MAX_ROWS, "u0": [1000.0] * MAX_ROWS, "num_iters": MAX_ITERS},
    },
    {
        "why": "tiny values",
        "args": {"w": [[1e-12, -1e-12], [1e-12, 1e-12]], "u0": [1.0, 0.0], "num_iters": 4},
    },
    {
        "why": "bfloat16 at the bound",
        "dtype": "bfloat16",
        "args": {"w": [[1000.0, -1000.0], [1000.0, 1000.0]], "u0": [-1000.0, 1000.0], "num_iters": 100},
    },
]
