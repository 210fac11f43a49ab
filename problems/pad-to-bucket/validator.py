"""Constraints of pad-to-bucket (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_int, check_int_range, check_int_tuple

MAX_BATCH = 64
MAX_LENGTH = 1024
MAX_BUCKETS = 8
MAX_BUCKET = 4096
#: Token ids and pad_id: any int32 value (the converter refuses the rest; stated here so the ``reach``
#: check holds the hidden cases to both ends).
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    tokens, lengths = args["tokens"], args["lengths"]
    errors: list[str] = []
    batch, length = tokens.shape
    if not 1 <= batch <= MAX_BATCH:
        errors.append(f"tokens: {batch} rows, 1 to {MAX_BATCH} allowed")
    if length > MAX_LENGTH:
        errors.append(f"tokens: rows of {length} tokens, at most {MAX_LENGTH} allowed")
    errors += check_int_range(tokens, "tokens", ge=INT32_MIN, le=INT32_MAX)
    if lengths.shape != (batch,):
        errors.append(f"lengths: shape {lengths.shape}, expected ({batch},): one length per row of tokens")
    else:
        errors += check_int_range(lengths, "lengths", ge=0, le=length)
    errors += check_int_tuple(
        args["buckets"], "buckets", min_items=1, max_items=MAX_BUCKETS, ge=1, le=MAX_BUCKET, increasing=True
    )
    errors += check_int(args["pad_id"], "pad_id", ge=INT32_MIN, le=INT32_MAX)
    return errors


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def empty_row(args: dict[str, Any], dtype: str) -> bool:
    return bool((np.asarray(args["lengths"]) == 0).any())


def ids_past_float32(args: dict[str, Any], dtype: str) -> bool:
    """An id or the pad id beyond 2^24, where float32 loses integers."""
    tokens = np.asarray(args["tokens"], dtype=np.int64)
    return bool(np.abs(tokens).max(initial=0) > 2**24 or abs(args["pad_id"]) > 2**24)


_OK = {"tokens": [[5, 6, 7], [8, 9, 1]], "lengths": [3, 1], "buckets": [2, 4, 8], "pad_id": 0}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "fractional token id", "args": {**_OK, "tokens": [[5, 6.5, 7], [8, 9, 1]]}},
    {"why": "boolean token", "args": {**_OK, "tokens": [[True, 6, 7], [8, 9, 1]]}},
    {"why": "a single row as a 1-D array", "args": {**_OK, "tokens": [5, 6, 7], "lengths": [3]}},
    {"why": "tokens as a tree", "args": {**_OK, "tokens": {"ids": [[5, 6, 7]]}}},
    {"why": "one length too many", "args": {**_OK, "lengths": [3, 1, 2]}},
    {"why": "a length past the row", "args": {**_OK, "lengths": [4, 1]}},
    {"why": "a negative length", "args": {**_OK, "lengths": [-1, 1]}},
    {"why": "fractional length", "args": {**_OK, "lengths": [2.5, 1]}},
    {"why": "no bucket", "args": {**_OK, "buckets": []}},
    {"why": "buckets not increasing", "args": {**_OK, "buckets": [4, 2, 8]}},
    {"why": "a zero bucket", "args": {**_OK, "buckets": [0, 4]}},
    {"why": "a bucket past the bound", "args": {**_OK, "buckets": [2, 100_000]}},
    {"why": "buckets given as a number", "args": {**_OK, "buckets": 4}},
    {"why": "a bucket given as a list", "args": {**_OK, "buckets": [2, [4], 8]}},
    {"why": "pad_id given as a list", "args": {**_OK, "pad_id": [0]}},
    {"why": "fractional pad_id", "args": {**_OK, "pad_id": 0.5}},
    {"why": "two lengths for one empty row", "args": {**_OK, "tokens": [[]], "lengths": [0, 0]}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "empty rows", "args": {**_OK, "tokens": [[], []], "lengths": [0, 0]}},
    {
        "why": "largest batch and row, cut to the largest bucket",
        "args": {
            "tokens": [[1] * MAX_LENGTH] * MAX_BATCH,
            "lengths": [MAX_LENGTH] * MAX_BATCH,
            "buckets": [MAX_BUCKET - 1, MAX_BUCKET],
            "pad_id": -(2**31),
        },
    },
    {"why": "largest pad id", "args": {**_OK, "pad_id": 2**31 - 1, "buckets": [1]}},
]
