"""Constraints of batched-attention (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_derived, check_finite, check_max_abs, check_max_elements, check_size

MAX_BATCH = 8
MAX_LEN = 64
MAX_DIM = 64
MAX_ABS = 100.0
MAX_ELEMENTS = 4096
#: The largest score magnitude the constraints allow: |q . k| / sqrt(d) <= d * MAX_ABS**2 / sqrt(d) at d = 64
#: (80,000, the statement's "tens of thousands"); not a constraint of its own, so the reach check sees how
#: close the hidden cases come to it.
MAX_SCORE = MAX_ABS**2 * MAX_DIM**0.5


def _largest_score(q: Any, k: Any) -> float:
    """The largest |q_t . k_s| / sqrt(d) over every query and key, masked or not, in float64 (exact here)."""
    scores = np.einsum("btd,bsd->bts", q.astype(np.float64), k.astype(np.float64)) / np.sqrt(q.shape[-1])
    return float(np.max(np.abs(scores)))


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    q, k, v, mask = args["q"], args["k"], args["v"], args["mask"]
    (batch, queries, dim), (k_batch, keys, k_dim), (v_batch, v_keys, v_dim) = q.shape, k.shape, v.shape
    errors = check_size(batch, "q", "the batch size B", ge=1, le=MAX_BATCH)
    errors += check_size(queries, "q", "the number of queries T", ge=1, le=MAX_LEN)
    errors += check_size(dim, "q", "the feature size d", ge=1, le=MAX_DIM)
    errors += check_size(keys, "k", "the number of keys S", ge=1, le=MAX_LEN)
    errors += check_size(v_dim, "v", "the value size dv", ge=1, le=MAX_DIM)
    if k_batch != batch or k_dim != dim:
        errors.append(f"k: shape {k.shape}, expected ({batch}, S, {dim}): the batch size and d of q")
    if v_batch != batch or v_keys != keys:
        errors.append(f"v: shape {v.shape}, expected ({batch}, {keys}, dv): the batch size of q and S of k")
    if mask.shape not in {(batch, queries, keys), (batch, keys)}:
        errors.append(
            f"mask: shape {mask.shape}, expected (B, T, S) = ({batch}, {queries}, {keys})"
            f" or (B, S) = ({batch}, {keys})"
        )
    for name in ("q", "k", "v"):
        errors += check_finite(args[name], name)
        errors += check_max_abs(args[name], name, MAX_ABS)
    errors += check_max_elements(args, MAX_ELEMENTS)
    if not errors:  # the scores exist (and stay within MAX_SCORE) once the shapes and values are right
        errors += check_derived(_largest_score(q, k), "q, k", "the largest score |q.k|/sqrt(d)", le=MAX_SCORE)
    return errors


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def bf16_large_scores_rounding_scale(args: dict[str, Any], dtype: str) -> bool:
    """bfloat16 inputs with scores of 10,000 or more and a d whose sqrt is no power of two (the scale
    1/sqrt(d) rounds in bfloat16)."""
    d = args["q"].shape[-1]
    power = d & (d - 1) == 0 and (d.bit_length() - 1) % 2 == 0
    return dtype == "bfloat16" and not power and _largest_score(args["q"], args["k"]) >= 1e4


def large_scores(args: dict[str, Any], dtype: str) -> bool:
    return _largest_score(args["q"], args["k"]) >= 1e4


def fully_masked_row(args: dict[str, Any], dtype: str) -> bool:
    mask = np.asarray(args["mask"])
    return bool((~mask.any(axis=-1)).any())


def key_padding_mask(args: dict[str, Any], dtype: str) -> bool:
    return args["mask"].ndim == 2


_OK = {
    "q": [[[1.0, 0.0], [0.0, 1.0]]],
    "k": [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]],
    "v": [[[1.0], [2.0], [3.0]]],
    "mask": [[True, True, False]],
}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "q with 2 dimensions", "args": {**_OK, "q": [[1.0, 0.0], [0.0, 1.0]]}},
    {"why": "q as a tree", "args": {**_OK, "q": {"x": [[[1.0, 0.0]]]}}},
    {"why": "k with another batch size", "args": {**_OK, "k": [[[1.0, 2.0]], [[3.0, 4.0]]]}},
    {"why": "k with another feature size", "args": {**_OK, "k": [[[1.0], [3.0], [5.0]]]}},
    {"why": "v with another number of keys", "args": {**_OK, "v": [[[1.0], [2.0]]]}},
    {"why": "mask with the wrong number of keys", "args": {**_OK, "mask": [[True, False]]}},
    {
        "why": "mask of shape (B, S, T)",
        "args": {**_OK, "mask": [[[True, True], [True, True], [True, False]]]},
    },
    {"why": "mask with 1 dimension", "args": {**_OK, "mask": [True, True, False]}},
    {"why": "mask of numbers", "args": {**_OK, "mask": [[1, 1, 0]]}},
    {"why": "no key", "args": {**_OK, "k": [[]], "v": [[]], "mask": [[]]}},
    {"why": "no query", "args": {**_OK, "q": [[]]}},
    {"why": "a value past the bound", "args": {**_OK, "v": [[[1.0], [2.0], [1000.0]]]}},
    {"why": "a query past the bound", "args": {**_OK, "q": [[[1.0, -101.0], [0.0, 1.0]]]}},
    {
        "why": "a batch of 9",
        "args": {"q": [[[1.0]]] * 9, "k": [[[1.0]]] * 9, "v": [[[1.0]]] * 9, "mask": [[True]] * 9},
    },
    {
        "why": "65 keys",
        "args": {**_OK, "k": [[[1.0, 0.0]] * 65], "v": [[[1.0]] * 65], "mask": [[True] * 65]},
    },
    {
        "why": "more than 4096 elements",
        "args": {
            "q": [[[1.0] * 64] * 32] * 2,
            "k": [[[1.0] * 64] * 32] * 2,
            "v": [[[1.0] * 8] * 32] * 2,
            "mask": [[True] * 32] * 2,
        },
    },
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "largest scores: every value at the bound, d = 64",
        "args": {
            "q": [[[MAX_ABS] * 64] * 8],
            "k": [[[MAX_ABS] * 64, [-MAX_ABS] * 64] * 8],
            "v": [[[MAX_ABS] * 4, [-MAX_ABS] * 4] * 8],
            "mask": [[[True, False] * 8] * 8],
        },
    },
    {
        "why": "every row fully masked",
        "args": {**_OK, "mask": [[[False, False, False], [False, False, False]]]},
    },
    {
        "why": "the largest batch, one query and one key each",
        "args": {"q": [[[1.0]]] * 8, "k": [[[-1.0]]] * 8, "v": [[[MAX_ABS]]] * 8, "mask": [[True]] * 8},
    },
    {
        "why": "64 queries and 64 keys",
        "args": {"q": [[[0.5]] * 64], "k": [[[2.0]] * 64], "v": [[[3.0]] * 64], "mask": [[True] * 64]},
    },
]
