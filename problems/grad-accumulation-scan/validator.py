"""Constraints of grad-accumulation-scan (statement.md, "Constraints"), checked on every case."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import (
    check_dtype,
    check_finite,
    check_has_leaves,
    check_max_abs,
    check_max_elements,
    check_ndim,
    check_number,
    check_same_structure,
    empty_leaf_not_first,
    leaves_with_paths,
)

#: Largest magnitude of any value: with at most 65,536 elements a prediction stays below 6.6e10 and its
#: square below 4.3e21, far inside float32's range, so the reference's loss and gradients stay finite.
MAX_ABS = 1000.0
MAX_ELEMENTS = 65_536


def _microbatch_shapes(params: Any, xs: Any) -> list[str]:
    """Each leaf of xs is (n, m, *its parameter's shape), with one n >= 1 and one m >= 1 for all leaves."""
    errors: list[str] = []
    lead: tuple[int, int] | None = None
    params_leaves = leaves_with_paths(params, "params")
    for (path, x), (_, p) in zip(leaves_with_paths(xs, "xs"), params_leaves, strict=True):
        x, p = np.asarray(x), np.asarray(p)
        if x.ndim != p.ndim + 2 or x.shape[2:] != p.shape:
            errors.append(f"{path}: shape {x.shape}, expected (n, m, *{p.shape})")
            continue
        n, m = x.shape[0], x.shape[1]
        if n < 1 or m < 1:
            errors.append(f"{path}: shape {x.shape}, needs n >= 1 microbatches of m >= 1 examples")
        elif lead is None:
            lead = (n, m)
        elif (n, m) != lead:
            errors.append(f"{path}: leading dimensions {(n, m)}, other leaves have {lead}")
    return errors


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    params, xs = args["params"], args["xs"]
    errors = [
        *check_has_leaves(params, "params"),
        *check_ndim(params, "params", max_ndim=3),
        *check_dtype(params, "params", dtype),
        *check_dtype(xs, "xs", dtype),
        *check_finite(params, "params"),
        *check_finite(xs, "xs"),
        *check_max_abs(params, "params", MAX_ABS),
        *check_max_abs(xs, "xs", MAX_ABS),
        *check_max_elements({"params": params, "xs": xs}, MAX_ELEMENTS),
        *check_number(args["target"], "target", ge=-MAX_ABS, le=MAX_ABS),
    ]
    structure = check_same_structure(params, "params", xs, "xs", shapes=False)
    return [*errors, *(structure or _microbatch_shapes(params, xs))]


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def empty_leaf_after_the_first(args: dict[str, Any], dtype: str) -> bool:
    return empty_leaf_not_first(args["params"])


#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "no leaf", "args": {"params": {}, "xs": {}, "target": 0.0}},
    {"why": "4-D parameter", "args": {"params": [[[[1.0]]]], "xs": [[[[[[1.0]]]]]], "target": 0.0}},
    {
        "why": "xs misses a key",
        "args": {"params": {"w": [1.0], "b": 0.0}, "xs": {"w": [[[1.0]]]}, "target": 0.0},
    },
    {
        "why": "xs leaf without the microbatch axes",
        "args": {"params": {"w": [1.0, 2.0]}, "xs": {"w": [1.0, 2.0]}, "target": 0.0},
    },
    {
        "why": "xs leaf of the wrong trailing shape",
        "args": {"params": {"w": [1.0, 2.0]}, "xs": {"w": [[[1.0, 2.0, 3.0]]]}, "target": 0.0},
    },
    {
        "why": "leaves disagree on n",
        "args": {"params": {"a": 1.0, "b": 2.0}, "xs": {"a": [[1.0]], "b": [[1.0], [2.0]]}, "target": 0.0},
    },
    {"why": "zero microbatches", "args": {"params": {"w": [1.0]}, "xs": {"w": [[[1.0]]][:0]}, "target": 0.0}},
    {"why": "NaN input", "args": {"params": {"w": [1.0]}, "xs": {"w": [[[float("nan")]]]}, "target": 0.0}},
    {
        "why": "value past the bound",
        "args": {"params": {"w": [2000.0]}, "xs": {"w": [[[1.0]]]}, "target": 0.0},
    },
    {"why": "target past the bound", "args": {"params": {"w": [1.0]}, "xs": {"w": [[[1.0]]]}, "target": 1e4}},
    {"why": "target as a list", "args": {"params": {"w": [1.0]}, "xs": {"w": [[[1.0]]]}, "target": [1.0]}},
    {"why": "missing target", "args": {"params": {"w": [1.0]}, "xs": {"w": [[[1.0]]]}}},
    {
        "why": "too many elements",
        "args": {"params": [0.0] * 10, "xs": [[[0.0] * 10] * 80] * 90, "target": 0.0},
    },
    {
        "why": "float16 case",
        "dtype": "float16",
        "args": {"params": {"w": [1.0]}, "xs": {"w": [[[1.0]]]}, "target": 0.0},
    },
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "every value at the bound, 65,536 elements",
        "args": {"params": [1000.0] * 16, "xs": [[[1000.0] * 16] * 64] * 63, "target": -1000.0},
    },
    {
        "why": "bfloat16 at the bound",
        "dtype": "bfloat16",
        "args": {
            "params": {"w": [1000.0, -1000.0]},
            "xs": {"w": [[[1000.0, 1000.0]] * 4] * 3},
            "target": 1000.0,
        },
    },
    {"why": "one microbatch of one example", "args": {"params": 0.5, "xs": [[2.0]], "target": 0.0}},
    {"why": "tiny values", "args": {"params": {"w": [1e-20]}, "xs": {"w": [[[1e-20]]]}, "target": 1e-30}},
]
