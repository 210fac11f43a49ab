"""Write ``cases/hidden.json`` for model-ensemble (deterministic: the same bytes on every run).

Run it after every change: ``python problems/model-ensemble/generate_cases.py``. ``judge check`` fails when
the file differs from what this script writes. Values are multiples of 1/8 (integers for the inputs near
the bound), exact in float32, and small enough that every product and sum of both layers is exact too, so
honest formulations (vmap, einsum, batched matmul, another summation order) agree to the last bit.

The cases hold seven ensemble sizes (2 to 8), and two pairs of cases differ in the ensemble size alone,
so a program that unrolls a loop over the members is another program at another size and breaks the
require_batched rule; two cases have n = E, where
stacking members along axis 1 instead of 0 gives the right shape with wrong values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_250_728
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"
#: validator.py's bound on every value.
MAX_ABS = 100.0


def _grid(rng: np.random.Generator, shape: tuple[int, ...], scale: float) -> Any:
    """Normal values times ``scale``, rounded to multiples of 1/8."""
    return np.round(rng.normal(size=shape) * scale * 8) / 8


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, w1: Any, b1: Any, w2: Any, b2: Any, x: Any) -> None:
        w1, b1, w2, b2, x = (np.asarray(v, dtype=np.float64) for v in (w1, b1, w2, b2, x))
        (e, d, h), k = w1.shape, w2.shape[2]
        assert b1.shape == (e, h) and w2.shape == (e, h, k) and b2.shape == (e, k) and x.shape[1] == d
        assert max(np.abs(v).max() for v in (w1, b1, w2, b2, x)) <= MAX_ABS, name
        params = {"w1": f32(w1), "b1": f32(b1), "w2": f32(w2), "b2": f32(b2)}
        cases.append(
            {
                "name": name,
                "visibility": "hidden",
                "dtype": "float32",
                "args": {"params": params, "x": f32(x)},
            }
        )

    def random_case(name: str, e: int, n: int, d: int, h: int, k: int, scale: float = 1.0) -> None:
        add(
            name,
            _grid(rng, (e, d, h), scale),
            _grid(rng, (e, h), scale),
            _grid(rng, (e, h, k), scale),
            _grid(rng, (e, k), scale),
            _grid(rng, (n, d), scale),
        )

    # The statement's examples again (shapes and structure) with other values, so a submission that returns
    # the published output whenever it recognises an example's shapes fails.
    add(
        "example_1_lookalike",
        [[[2.0, -0.5]], [[-1.0, 1.0]]],
        [[0.5, 0.0], [1.0, -2.0]],
        [[[1.0], [-1.0]], [[0.5], [2.0]]],
        [[1.0], [-0.5]],
        [[1.5], [-1.0], [4.0]],
    )
    add(
        "example_2_lookalike",
        [[[0.5], [-1.0]], [[2.0], [1.0]], [[-1.0], [-1.0]]],
        [[1.0], [-3.0], [0.5]],
        [[[1.0, 2.0]], [[-1.0, 0.5]], [[3.0, -2.0]]],
        [[0.0, 1.0], [2.0, 0.0], [-1.0, -1.0]],
        [[2.0, -1.0], [0.5, 3.0]],
    )
    # Two members with one input and one hidden unit, and two examples. (No case has h == k: jax lowers two
    # equal constants once, so a program with a zero of shape (E, n, h) and another of shape (E, n, k), such
    # as a ReLU on both layers, would have fewer ops there than at other sizes.)
    random_case("two_members_one_hidden_unit", 2, 2, 1, 1, 2)
    random_case("two_members", 2, 4, 3, 5, 2)
    random_case("four_members", 4, 8, 4, 8, 3)
    # n = E: members stacked along axis 1 (out_axes=1) have the right shape and the wrong values.
    random_case("five_members_five_examples", 5, 5, 3, 6, 2)
    random_case("four_members_four_examples", 4, 4, 2, 3, 1)
    random_case("three_members", 3, 6, 5, 4, 2)
    random_case("two_members_wide_hidden", 2, 10, 3, 16, 4, scale=0.5)
    # The most members, then the most examples, the widest inputs and hidden layer and the most outputs.
    random_case("eight_members", 8, 16, 4, 8, 4)
    random_case("eight_members_two_examples", 8, 2, 2, 2, 1)
    # The require_batched rule compares the programs of two cases that differ in E alone (every other size
    # held, judge.grading.transform_rules.held_key): these repeat the sizes of two_members and four_members
    # with other ensemble sizes (E not equal to any other size, so no lowering coincidence moves with it).
    random_case("six_members_as_two_members", 6, 4, 3, 5, 2)
    random_case("seven_members_as_four_members", 7, 8, 4, 8, 3)
    random_case("largest_network", 2, 64, 16, 32, 8, scale=0.5)
    # Every hidden unit of one member off (large negative biases) beside live members.
    w1, w2 = _grid(rng, (3, 4, 6), 1.0), _grid(rng, (3, 6, 2), 1.0)
    b1 = _grid(rng, (3, 6), 1.0)
    b1[1] = -50.0
    add("a_dead_member", w1, b1, w2, _grid(rng, (3, 2), 1.0), _grid(rng, (6, 4), 0.5))
    # Values near the bound 100: integer inputs up to 100, biases in the tens, weights in eighths small
    # enough that both layers stay exact in float32.
    e, n, d, h, k = 4, 32, 16, 8, 4
    x = np.clip(np.round(rng.normal(size=(n, d)) * 40), -MAX_ABS, MAX_ABS)
    w1 = np.round(rng.normal(size=(e, d, h)) * 0.1 * 8) / 8
    b1 = np.clip(np.round(rng.normal(size=(e, h)) * 30), -MAX_ABS, MAX_ABS)
    w2 = np.round(rng.normal(size=(e, h, k)) * 0.25 * 8) / 8
    b2 = np.clip(np.round(rng.normal(size=(e, k)) * 50), -MAX_ABS, MAX_ABS)
    add("near_the_bounds", w1, b1, w2, b2, x)
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
