"""Constraints of pairwise-distances (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.constraints import check_derived, check_finite, check_max_abs, check_max_elements, check_size

MAX_POINTS = 256
MAX_DIM = 64
MAX_ELEMENTS = 4096
#: Largest magnitude: 64 squared differences of 2e15 stay far below float32's (and bfloat16's) maximum.
MAX_ABS = 1e15


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    x, y = args["x"], args["y"]
    errors: list[str] = []
    (n, d), (m, e) = x.shape, y.shape
    # Sizes through check_size, so the reach check sees whether the hidden cases reach each bound exactly.
    errors += check_size(n, "x", "the number of points n", ge=1, le=MAX_POINTS)
    errors += check_size(m, "y", "the number of points m", ge=1, le=MAX_POINTS)
    errors += check_size(d, "x", "the number of coordinates d", ge=1, le=MAX_DIM)
    if e != d:
        errors.append(f"y: points of {e} coordinates, expected {d} like x")
    errors += check_max_elements({"x": x, "y": y}, MAX_ELEMENTS)
    errors += check_finite(x, "x") + check_finite(y, "y")
    errors += check_max_abs(x, "x", MAX_ABS) + check_max_abs(y, "y", MAX_ABS)
    if not errors:
        # Distances go down to 0 (identical points) and every value between: the smallest nonzero one is
        # noted, so the reach check sees whether the hidden cases test tiny distances, not only exact zeros.
        diff = x.astype(np.float64)[:, None, :] - y.astype(np.float64)[None, :, :]
        distances = np.sqrt(np.sum(diff * diff, axis=-1))
        nonzero = distances[distances > 0]
        if nonzero.size:
            errors += check_derived(nonzero.min(), "x, y", "the smallest nonzero distance", gt=0.0)
    return errors


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def far_from_the_origin_and_close(args: dict[str, Any], dtype: str) -> bool:
    """Two distinct points closer than 10^-3 of their distance from the origin (and that at least 1): the
    expansion's cancellation loses every digit there."""
    x, y = np.asarray(args["x"], dtype=np.float64), np.asarray(args["y"], dtype=np.float64)
    distance = np.sqrt(((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=-1))
    scale = np.maximum(np.linalg.norm(x, axis=1)[:, None], np.linalg.norm(y, axis=1)[None, :])
    return bool(((distance > 0) & (scale >= 1.0) & (distance < 1e-3 * scale)).any())


def identical_points(args: dict[str, Any], dtype: str) -> bool:
    """A point of x equal to a point of y: their distance is exactly 0."""
    x, y = np.asarray(args["x"], dtype=np.float64), np.asarray(args["y"], dtype=np.float64)
    return bool((np.abs(x[:, None, :] - y[None, :, :]).max(axis=-1) == 0).any())


_OK = {"x": [[0.0, 0.0], [3.0, 4.0]], "y": [[0.0, 0.0], [6.0, 8.0], [3.0, 0.0]]}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "a single point as a 1-D array", "args": {**_OK, "x": [3.0, 4.0]}},
    {"why": "a 3-D array", "args": {**_OK, "y": [[[0.0, 0.0]]]}},
    {"why": "a bare number", "args": {**_OK, "x": 1.0}},
    {"why": "points given as a tree", "args": {**_OK, "x": {"points": [[0.0, 0.0]]}}},
    {"why": "different widths", "args": {**_OK, "y": [[0.0, 0.0, 0.0]]}},
    {"why": "no point", "args": {**_OK, "x": []}},
    {"why": "points of 0 coordinates", "args": {"x": [[], []], "y": [[]]}},
    {"why": "too many coordinates", "args": {"x": [[0.0] * 65], "y": [[0.0] * 65]}},
    {"why": "too many points", "args": {"x": [[0.0]] * 257, "y": [[0.0]]}},
    {"why": "too many numbers", "args": {"x": [[0.0] * 64] * 40, "y": [[0.0] * 64] * 40}},
    {"why": "a value past the bound", "args": {**_OK, "x": [[0.0, 0.0], [2e15, 4.0]]}},
    {"why": "an infinite value", "args": {**_OK, "y": [[0.0, 0.0], [6.0, 8.0], [float("inf"), 0.0]]}},
    {"why": "a NaN", "args": {**_OK, "y": [[0.0, float("nan")], [6.0, 8.0], [3.0, 0.0]]}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {
        "why": "opposite corners at the largest magnitude",
        "args": {"x": [[1e15] * 64] * 32, "y": [[-1e15] * 64] * 32},
    },
    {"why": "one point each, one coordinate", "args": {"x": [[0.0]], "y": [[0.0]]}},
    {"why": "most points on one side", "args": {"x": [[1.0]] * 256, "y": [[-1.0]] * 256}},
    {"why": "tiny values", "args": {"x": [[1e-30, -1e-30]], "y": [[0.0, 1e-30]]}},
]
