"""Constraints of kv-cache-update (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_finite, check_int_range, check_max_abs

#: Largest magnitude of any key or value.
MAX_ABS = 1e4
#: Cache lengths: at least 32 rows keep one row small beside the cache (the in-place rule's measure).
MIN_LEN, MAX_LEN = 32, 128
MAX_HEADS, MAX_HEAD_DIM = 4, 16
#: Elements of one cache at most.
MAX_CACHE = 1920


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    k_cache, v_cache, k_new, v_new = (args[n] for n in ("k_cache", "v_cache", "k_new", "v_new"))
    errors: list[str] = []
    length, heads, head_dim = k_cache.shape
    if not MIN_LEN <= length <= MAX_LEN:
        errors.append(f"k_cache: {length} rows, must be {MIN_LEN} to {MAX_LEN}")
    if not 1 <= heads <= MAX_HEADS:
        errors.append(f"k_cache: {heads} heads, must be 1 to {MAX_HEADS}")
    if not 2 <= head_dim <= MAX_HEAD_DIM:
        errors.append(f"k_cache: head_dim {head_dim}, must be 2 to {MAX_HEAD_DIM}")
    if k_cache.size > MAX_CACHE:
        errors.append(f"k_cache: {k_cache.size} elements, at most {MAX_CACHE}")
    if v_cache.shape != k_cache.shape:
        errors.append(f"v_cache: shape {v_cache.shape}, expected {k_cache.shape} like k_cache")
    for name, new in (("k_new", k_new), ("v_new", v_new)):
        if new.shape != (heads, head_dim):
            errors.append(f"{name}: shape {new.shape}, expected ({heads}, {head_dim})")
    for name in ("k_cache", "v_cache", "k_new", "v_new"):
        errors += check_finite(args[name], name) + check_max_abs(args[name], name, MAX_ABS)
    return errors + check_int_range(args["pos"], "pos", ge=0, le=length - 1)


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def overwritten_by_far_smaller(args: dict[str, Any], dtype: str) -> bool:
    """The row at pos holds magnitudes of 1,000 or more and the new token's are 1,000 times smaller."""
    row = int(args["pos"])
    old = min(float(np.abs(args[c][row]).min()) for c in ("k_cache", "v_cache"))
    new = max(float(np.abs(args[n]).max()) for n in ("k_new", "v_new"))
    return old >= 1000.0 and new * 1000.0 <= old


def last_row(args: dict[str, Any], dtype: str) -> bool:
    return int(args["pos"]) == args["k_cache"].shape[0] - 1


def first_row(args: dict[str, Any], dtype: str) -> bool:
    return int(args["pos"]) == 0


def _filled(rows: int, heads: int, dim: int, value: float) -> list[Any]:
    return [[[value] * dim for _ in range(heads)] for _ in range(rows)]


_NEW = [[1.0, 2.0]]
_OK: dict[str, Any] = {
    "k_cache": _filled(32, 1, 2, 0.5),
    "v_cache": _filled(32, 1, 2, -0.5),
    "k_new": _NEW,
    "v_new": _NEW,
    "pos": 3,
}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "position past the end", "args": {**_OK, "pos": 32}},
    {"why": "negative position", "args": {**_OK, "pos": -1}},
    {"why": "fractional position", "args": {**_OK, "pos": 1.5}},
    {
        "why": "cache too short",
        "args": {**_OK, "k_cache": _filled(8, 1, 2, 0.5), "v_cache": _filled(8, 1, 2, 0.5)},
    },
    {"why": "caches of different shapes", "args": {**_OK, "v_cache": _filled(33, 1, 2, 0.5)}},
    {"why": "new keys of the wrong shape", "args": {**_OK, "k_new": [[1.0, 2.0, 3.0]]}},
    {"why": "value past the bound", "args": {**_OK, "k_new": [[1e5, 2.0]]}},
    {"why": "cache of rank 2", "args": {**_OK, "k_cache": [[1.0, 2.0]]}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "last position, largest values", "args": {**_OK, "pos": 31, "k_new": [[MAX_ABS, -MAX_ABS]]}},
    {
        "why": "longest cache",
        "args": {
            **_OK,
            "k_cache": _filled(128, 1, 15, 1.0),
            "v_cache": _filled(128, 1, 15, 2.0),
            "k_new": [[3.0] * 15],
            "v_new": [[4.0] * 15],
            "pos": 127,
        },
    },
]
