"""Constraints of prng-key-splitting (statement.md, "Constraints"), checked on every case by `judge check`.

The key needs no check: every uint32 key data is a valid threefry2x32 key, and the converter refuses
anything else (a seed outside 0..2**32 - 1, key data that is not two uint32 words, a batch of keys)."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_finite, check_max_abs, check_max_elements, check_ndim

#: Largest magnitude of an entry of x.
MAX_ABS = 100.0
#: Most entries of x.
MAX_ELEMENTS = 4000


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    x = args["x"]
    errors = check_ndim(x, "x", min_ndim=1, max_ndim=2)
    errors += check_max_elements({"x": x}, MAX_ELEMENTS)
    if x.size == 0:
        errors.append("x: the array is empty, at least 1 element is required")
    errors += check_finite(x, "x")
    errors += check_max_abs(x, "x", MAX_ABS)
    return errors


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def key_data_no_seed_makes(args: dict[str, Any], dtype: str) -> bool:
    """A key whose first data word is nonzero: no seed makes it ("any key data")."""
    return int(np.asarray(args["key"].data).reshape(-1)[0]) != 0


_OK: dict[str, Any] = {"key": {"key": 42}, "x": [1.0, -2.0, 0.5]}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "seed below -2**31", "args": {**_OK, "key": {"key": -(2**31) - 1}}},
    {"why": "seed past 2**32 - 1", "args": {**_OK, "key": {"key": 2**32}}},
    {"why": "fractional seed", "args": {**_OK, "key": {"key": 1.5}}},
    {"why": "raw key data of three words", "args": {**_OK, "key": {"key_data": [0, 1, 2]}}},
    {"why": "raw key data without its object", "args": {**_OK, "key": [0, 42]}},
    {"why": "a batch of keys", "args": {**_OK, "key": {"key": [1, 2]}}},
    {"why": "a string seed", "args": {**_OK, "key": {"key": "42"}}},
    {"why": "an unknown key form", "args": {**_OK, "key": {"seed": 42}}},
    {"why": "0-d x", "args": {**_OK, "x": 1.0}},
    {"why": "3-d x", "args": {**_OK, "x": [[[1.0]]]}},
    {"why": "empty x", "args": {**_OK, "x": []}},
    {"why": "value past the bound", "args": {**_OK, "x": [1.0, 200.0]}},
    {"why": "too many elements", "args": {**_OK, "x": [[0.5] * 81 for _ in range(50)]}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "largest seed", "args": {**_OK, "key": {"key": 2**32 - 1}}},
    {"why": "negative seed, as jax.random.key(-1) takes it", "args": {**_OK, "key": {"key": -1}}},
    {"why": "smallest seed", "args": {**_OK, "key": {"key": -(2**31)}}},
    {"why": "largest key data", "args": {**_OK, "key": {"key_data": [4294967295, 4294967295]}}},
    {"why": "bare seed 0", "args": {**_OK, "key": 0}},
    {"why": "largest magnitudes", "args": {**_OK, "x": [100.0, -100.0]}},
    {"why": "one element", "args": {**_OK, "x": [[3.0]]}},
    {"why": "most elements", "args": {**_OK, "x": [[0.25] * 80 for _ in range(50)]}},
]
