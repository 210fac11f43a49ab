"""Constraints of ema-scan (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_dtype, check_finite, check_max_abs, check_max_elements, check_number

#: Largest magnitude of any value, 2^100 (about 1.27e30; exact in float32 and bfloat16). Every average is a
#: weighted mean of init and earlier steps, so it never exceeds the largest input in magnitude, and each
#: product and sum stays far inside float32's range.
MAX_ABS = 2.0**100
#: Most elements in xs (and so in the result).
MAX_ELEMENTS = 65_536


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    xs, init = np.asarray(args["xs"]), np.asarray(args["init"])
    errors: list[str] = []
    if xs.ndim >= 1 and xs.shape[0] < 1:
        errors.append(f"xs: shape {xs.shape}, needs at least one step on axis 0")
    if init.shape != xs.shape[1:]:
        errors.append(f"init: shape {init.shape}, expected {xs.shape[1:]}: the shape of one step xs[t]")
    return [
        *errors,
        *check_dtype(xs, "xs", dtype),
        *check_dtype(init, "init", dtype),
        *check_finite(xs, "xs"),
        *check_finite(init, "init"),
        *check_max_abs(xs, "xs", MAX_ABS),
        *check_max_abs(init, "init", MAX_ABS),
        *check_max_elements({"xs": xs}, MAX_ELEMENTS),
        *check_number(args["decay"], "decay", ge=0.0, le=1.0),
    ]


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def empty_step(args: dict[str, Any], dtype: str) -> bool:
    return bool(args["xs"].size == 0)


_OK = {"xs": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "init": [0.0, 0.0], "decay": 0.9}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "xs as a single number (no time axis)", "args": {**_OK, "xs": 1.0, "init": 0.0}},
    {"why": "4-D xs", "args": {**_OK, "xs": [[[[1.0]]]], "init": [[[1.0]]]}},
    {"why": "3-D init", "args": {**_OK, "init": [[[0.0, 0.0]]]}},
    {"why": "xs as a tree", "args": {**_OK, "xs": {"w": [[1.0, 2.0]]}}},
    {"why": "no steps", "args": {**_OK, "xs": [], "init": 0.0}},
    {"why": "init shaped like all of xs", "args": {**_OK, "init": [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]}},
    {"why": "init of the wrong length", "args": {**_OK, "init": [0.0, 0.0, 0.0]}},
    {"why": "init as a number for 2-D xs", "args": {**_OK, "init": 0.0}},
    {"why": "NaN in xs", "args": {**_OK, "xs": [[1.0, float("nan")], [3.0, 4.0], [5.0, 6.0]]}},
    {"why": "infinite init", "args": {**_OK, "init": [float("inf"), 0.0]}},
    {"why": "value past the bound", "args": {**_OK, "xs": [[1e35, 2.0], [3.0, 4.0], [5.0, 6.0]]}},
    {"why": "negative decay", "args": {**_OK, "decay": -0.1}},
    {"why": "decay above 1", "args": {**_OK, "decay": 1.5}},
    {"why": "decay as a list", "args": {**_OK, "decay": [0.9]}},
    {"why": "missing decay", "args": {"xs": _OK["xs"], "init": _OK["init"]}},
    {"why": "too many elements", "args": {**_OK, "xs": [[0.0] * 2] * 40_000}},
    {"why": "float16 case", "dtype": "float16", "args": _OK},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "largest magnitudes with both signs",
        "args": {"xs": [[MAX_ABS, -MAX_ABS], [-MAX_ABS, MAX_ABS]], "init": [-MAX_ABS, MAX_ABS], "decay": 0.5},
    },
    {
        "why": "bfloat16 at the bound",
        "dtype": "bfloat16",
        "args": {"xs": [MAX_ABS, -MAX_ABS, MAX_ABS], "init": -MAX_ABS, "decay": 0.999},
    },
    {"why": "decay 0 and decay 1 are allowed", "args": {**_OK, "decay": 0.0}},
    {"why": "decay 1", "args": {**_OK, "decay": 1.0}},
    {"why": "one step of a 0-d state", "args": {"xs": [2.0], "init": 1.0, "decay": 0.5}},
    {"why": "largest sequence", "args": {"xs": [[1.0, -1.0]] * 32_768, "init": [0.0, 0.0], "decay": 0.99}},
    {"why": "tiny values", "args": {"xs": [[1e-30]], "init": [-1e-30], "decay": 0.5}},
    {"why": "empty steps", "args": {"xs": [[], []], "init": [], "decay": 0.5}},
]
