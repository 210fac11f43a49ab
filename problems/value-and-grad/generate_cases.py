"""Write ``cases/hidden.json`` for value-and-grad (deterministic: the same bytes on every run).

Run it after every change: ``python problems/value-and-grad/generate_cases.py``. ``judge check`` fails when
the file differs from what this script writes. Values are multiples of 1/8 (integers for the inputs near
the bound), exact in float32, and the targets are the model's prediction plus noise in eighths, so the
residual is exact, the sums of its squares and of its products with the inputs are exact in float32 in any
order, and with n a power of two the division by n is exact too: honest formulations (forward or reverse
mode, per-example gradients, another summation order) agree to the last bit. A case near the bound with
rounded terms would not: some gradient entries are the small difference of large sums, and the order of
a rounded sum moves them past the float32 tolerance's absolute part (1e-6).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_250_727
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"
#: validator.py's bounds.
MAX_ABS = 100.0


def _grid(rng: np.random.Generator, shape: tuple[int, ...], scale: float) -> Any:
    """Normal values times ``scale``, rounded to multiples of 1/8 and kept within the bound."""
    return np.clip(np.round(rng.normal(size=shape) * scale * 8) / 8, -MAX_ABS, MAX_ABS)


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, w: Any, b: Any, x: Any, y: Any) -> None:
        w, b, x, y = (np.asarray(v, dtype=np.float64) for v in (w, b, x, y))
        assert w.shape == (x.shape[1], y.shape[1]) and b.shape == (y.shape[1],) and x.shape[0] == y.shape[0]
        args = {"params": {"w": f32(w), "b": f32(b)}, "x": f32(x), "y": f32(y)}
        cases.append({"name": name, "visibility": "hidden", "dtype": "float32", "args": args})

    def random_case(name: str, n: int, d: int, k: int, scale: float = 1.0, noise: float = 2.0) -> None:
        w, b, x = _grid(rng, (d, k), scale), _grid(rng, (k,), scale), _grid(rng, (n, d), scale)
        # Targets: the prediction plus noise in eighths, so the residual is that noise (both signs, exact)
        # and the sum of its squares is exact in float32 whatever order a solution sums in.
        add(name, w, b, x, x @ w + b + _grid(rng, (n, k), noise))

    # The statement's examples again (shapes and structure) with other values, so a submission that returns
    # the published output whenever it recognises an example's shapes fails.
    add("example_1_lookalike", [[-1.5]], [0.75], [[2.0], [-1.0]], [[0.5], [1.0]])
    add(
        "example_2_lookalike",
        [[0.5, 2.0, -1.0]],
        [0.0, -0.5, 0.25],
        [[2.0], [-3.0]],
        [[1.0, 2.0, 3.0], [0.0, -4.0, 1.0]],
    )
    add(
        "example_3_lookalike",
        [[-1.0], [0.5]],
        [2.0],
        [[1.0, 2.0], [3.0, -1.0], [0.0, 0.5]],
        [[0.0], [1.0], [-2.0]],
    )
    # One example, one input, one output (every dimension at its lower bound): n = 1, so the mean over
    # examples is the example's own error.
    add("one_example_scalar_model", [[3.0]], [-1.0], [[0.5]], [[2.0]])
    # One example with k = 4 outputs: dividing by n * k is wrong even when n = 1.
    random_case("one_example_four_outputs", 1, 5, 4)
    random_case("small_8x4x3", 8, 4, 3)
    random_case("small_8x4x3_again", 8, 4, 3, scale=2.0)
    random_case("two_outputs_16x8x2", 16, 8, 2)
    random_case("medium_32x16x5", 32, 16, 5)
    # The most examples (n = 128), then the widest model (d = 32, k = 8).
    random_case("most_examples_128x8x4", 128, 8, 4)
    random_case("widest_model_64x32x8", 64, 32, 8, scale=0.5)
    # Values near the bound 100: integer inputs up to 100, a bias up to tens, weights in eighths small
    # enough that the predictions stay within the targets' bound, and n = 64.
    x = np.clip(np.round(rng.normal(size=(64, 32)) * 40), -MAX_ABS, MAX_ABS)
    y = np.full((64, 8), np.inf)
    while np.abs(y).max() > MAX_ABS:  # redrawn until every target is within the bound (deterministic)
        w = np.round(rng.normal(size=(32, 8)) * 0.1 * 8) / 8
        b = np.clip(np.round(rng.normal(size=8) * 15), -MAX_ABS, MAX_ABS)
        y = x @ w + b + _grid(rng, (64, 8), 4.0)
    add("near_the_bounds_64x32x8", w, b, x, y)
    # A perfect fit: the loss and every gradient entry are 0.
    w, b, x = _grid(rng, (4, 3), 1.0), _grid(rng, (3,), 1.0), _grid(rng, (8, 4), 1.0)
    add("perfect_fit", w, b, x, x @ w + b)
    # Perfect and near-perfect fits with predictions near the bound (a bias of 70 to 85 in magnitude and
    # small weights): the squares of the predictions are near 6,000 and their sums near 3 * 10^6, where a
    # float32 sum rounds by 1/4, so a loss written as an expanded square (sum of yhat^2, minus twice sum of
    # yhat * y, plus sum of y^2) keeps only that rounding, while the residual (exact: integer inputs times
    # weights in eighths) gives 0 or a few 1/64ths. (At an exact fit the three sums are one sum and cancel
    # exactly: the near fits are the ones that tell.)
    for name, noise in (
        ("perfect_fit_large_predictions", 0.0),
        ("near_perfect_fit_large_predictions", 0.125),
        ("near_perfect_fit_large_predictions_2", 0.25),
    ):
        y = np.full((64, 8), np.inf)
        while np.abs(y).max() > MAX_ABS:  # redrawn until every target is within the bound (deterministic)
            x = np.clip(np.round(rng.normal(size=(64, 8)) * 30), -MAX_ABS, MAX_ABS)
            w = np.round(rng.normal(size=(8, 8)) * 0.05 * 8) / 8
            b = np.where(rng.random(8) < 0.5, -1.0, 1.0) * rng.integers(70, 86, size=8)
            y = x @ w + b + (rng.integers(-1, 2, size=(64, 8)) * noise)
        add(name, w, b, x, y)
    # A zero bias and zero weights: the gradient is the mean target, negated.
    add(
        "zero_parameters", np.zeros((16, 5)), np.zeros(5), _grid(rng, (32, 16), 1.0), _grid(rng, (32, 5), 3.0)
    )
    # Only the bias is off: the weights' gradient comes from one shared residual per output.
    w, x = _grid(rng, (8, 2), 1.0), _grid(rng, (16, 8), 1.0)
    add("bias_off_by_one", w, np.ones(2), x, x @ w)
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
