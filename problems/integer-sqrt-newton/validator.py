"""Constraints of integer-sqrt-newton (statement.md, "Constraints"), checked by `judge check`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

MAX_N = 2**30
MAX_ELEMENTS = 4096


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    n = np.asarray(args["n"])
    errors: list[str] = []
    if n.dtype != np.int32:
        errors.append(f"n: dtype {n.dtype}, expected int32")
    if n.ndim != 1:
        errors.append(f"n: {n.ndim} dimensions, expected 1")
    if n.size > MAX_ELEMENTS:
        errors.append(f"n: {n.size} elements, at most {MAX_ELEMENTS}")
    if n.size and n.min() < 0:
        errors.append(f"n: entries at least 0, got {n.min()}")
    if n.size and n.max() > MAX_N:
        errors.append(f"n: entries at most {MAX_N}, got {n.max()}")
    return errors


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def empty(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["n"]).size == 0)


def zeros_and_ones(args: dict[str, Any], dtype: str) -> bool:
    """Both 0 and 1 occur (no step, no division by zero) beside larger entries."""
    n = np.asarray(args["n"])
    return bool(np.any(n == 0) and np.any(n == 1) and np.any(n > 1))


def at_the_bound(args: dict[str, Any], dtype: str) -> bool:
    """An entry equals 2^30, the largest stated."""
    n = np.asarray(args["n"])
    return bool(n.size and int(n.max()) == MAX_N)


def most_elements(args: dict[str, Any], dtype: str) -> bool:
    return bool(np.asarray(args["n"]).size == MAX_ELEMENTS)


def beside_large_perfect_squares(args: dict[str, Any], dtype: str) -> bool:
    """An entry s^2 - 1 with s >= 2^13 (above float32's 24 significant bits, a float root rounds up to s)."""
    n = np.asarray(args["n"], dtype=np.int64)
    s = np.array([math.isqrt(int(v) + 1) for v in n], dtype=np.int64)
    return bool(np.any((s >= 2**13) & (s * s == n + 1)))


#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "a negative entry", "args": {"n": [4, -1]}},
    {"why": "an entry past 2^30", "args": {"n": [2**30 + 1]}},
    {"why": "a fraction", "args": {"n": [2.5]}},
    {"why": "a 2-D array", "args": {"n": [[1, 2], [3, 4]]}},
    {"why": "a bare number", "args": {"n": 4}},
    {"why": "too many elements", "args": {"n": [1] * 4097}},
    {"why": "a string", "args": {"n": ["4"]}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "largest entry", "args": {"n": [2**30, 2**30 - 1]}},
    {"why": "zero and one", "args": {"n": [0, 1]}},
    {"why": "empty", "args": {"n": []}},
    {"why": "most elements", "args": {"n": list(range(4096))}},
]
