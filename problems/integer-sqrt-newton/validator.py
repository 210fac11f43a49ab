"""Constraints of integer-sqrt-newton (statement.md, "Constraints"), checked by `judge check`."""

from __future__ import annotations

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
