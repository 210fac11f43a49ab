"""Write ``cases/hidden.json`` for sgd-momentum (deterministic: same bytes on every run).

Run from anywhere: ``python problems/sgd-momentum/generate_cases.py``.
Values are written as exact float32 numbers (exact bfloat16 numbers for bfloat16 cases), so converting the
JSON to the case dtype is exact and the judge sees the same inputs as this script.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import bf16, f32, map_shapes, num, random_tree, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_240_612
#: The bound on values and the learning rate (validator.py, statement.md).
MAX_ABS = 1e15
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"


def _zeros_tree(shapes: Any) -> Any:
    return map_shapes(shapes, lambda shape: f32(np.zeros(shape)))


# Dicts holding a list of dicts, with 0-d, 1-d, 2-d, 3-d and empty (0,) leaves.
MIXED = {
    "encoder": {"blocks": [{"w": (3, 4), "b": (4,)}, {"w": (4, 2), "b": (2,)}]},
    "emb": (2, 3, 2),
    "scale": (),
    "empty": (0,),
}
# A list of dicts as the root of the tree.
ROOT_LIST = [{"w": (2, 3), "b": (3,)}, {"w": (3,), "gain": ()}]
# Lists of dicts inside lists of dicts.
DEEP = {
    "layers": [
        {"sub": [{"k": (2, 2)}, {"k": (2,)}], "bias": ()},
        {"sub": [{"k": (2, 2)}], "bias": ()},
    ],
    "head": {"w": (2, 2, 2)},
}
# 1,057 elements per tree, 3,171 over params, grads and velocity together.
LARGE = {"w1": (16, 48), "conv": (6, 8, 5), "b1": (48,), "gain": ()}
# A list node of 6 items beside a tower nested 9 containers deep.
LONG_DEEP = {
    "blocks": [{"w": (2, 3), "b": (3,)} for _ in range(6)],
    "tower": {"l1": [{"l2": {"l3": [{"l4": [{"w": (2,)}, {"w": ()}, {"w": (2, 2)}]}]}}]},
}
# A list of 5 dicts as the root of the tree.
ROOT_LIST_5 = [{"w": (3,), "b": ()} for _ in range(5)]


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(
        name: str,
        params: Any,
        grads: Any,
        velocity: Any,
        learning_rate: float,
        momentum: float,
        dtype: str = "float32",
    ) -> None:
        cases.append(
            {
                "name": name,
                "visibility": "hidden",
                "dtype": dtype,
                "args": {
                    "params": params,
                    "grads": grads,
                    "velocity": velocity,
                    "learning_rate": num(learning_rate),
                    "momentum": num(momentum),
                },
            }
        )

    def random_case(name: str, shapes: Any, lr: float, mom: float, cast: Any = f32, **kw: Any) -> None:
        params = random_tree(rng, shapes, 1.0, cast)
        grads = random_tree(rng, shapes, 0.5, cast)
        velocity = random_tree(rng, shapes, 0.5, cast)
        add(name, params, grads, velocity, lr, mom, **kw)

    # The statement's examples again: the same structure, shapes and dtype with other values, so a
    # submission that returns the published output whenever it recognises an example's structure fails.
    add(
        "example_1_lookalike",
        {"w": f32([1.5, 0.25]), "b": f32(-0.5)},
        {"w": f32([-0.5, 1.0]), "b": f32(0.75)},
        {"w": f32([0.25, -0.25]), "b": f32(1.0)},
        0.25,
        0.5,
    )
    random_case("example_2_lookalike", {"dense": {"w": (2, 2), "b": (2,)}, "scale": ()}, 0.2, 0.75)
    random_case("example_3_lookalike", {"layers": [{"w": (2,), "b": ()}, {"w": (1,), "b": ()}]}, 0.1, 0.95)
    # The whole tree is one array, then one 0-d array.
    add("bare_vector", f32([1.0, -2.0, 0.5]), f32([0.5, 0.25, -1.0]), f32([0.25, -0.5, 0.0]), 0.125, 0.875)
    add("bare_scalar", f32(1.5), f32(-0.25), f32(0.5), 0.3, 0.5)
    # Velocity all zero: the new velocity is the gradient.
    add(
        "zero_velocity",
        random_tree(rng, MIXED, 1.0, f32),
        random_tree(rng, MIXED, 0.5, f32),
        _zeros_tree(MIXED),
        0.1,
        0.9,
    )
    # learning_rate 0: params come back unchanged while the velocity still updates.
    random_case("learning_rate_zero", MIXED, 0.0, 0.9)
    # momentum 0: the old velocity is forgotten, the new velocity is the gradient.
    random_case("momentum_zero", MIXED, 0.05, 0.0)
    # momentum close to 1: the old velocity dominates.
    random_case("momentum_near_one", MIXED, 0.01, 0.99)
    random_case("root_list_of_dicts", ROOT_LIST, 0.2, 0.8)
    random_case("deep_lists_of_dicts", DEEP, 0.3, 0.6)
    # Thousands of random values, a small step and a big one.
    random_case("large_random", LARGE, 0.05, 0.9)
    random_case("large_random_big_step", LARGE, 1.5, 0.3)
    # bfloat16 leaves: the results must stay bfloat16 (a float32 learning rate or update promotes them).
    random_case("bf16_mixed_nesting", MIXED, 0.1, 0.9, bf16, dtype="bfloat16")
    random_case("bf16_large", LARGE, 0.05, 0.95, bf16, dtype="bfloat16")
    random_case("bf16_bare_vector", (200,), 0.01, 0.99, bf16, dtype="bfloat16")
    random_case("bf16_root_list_of_dicts", ROOT_LIST, 0.25, 0.5, bf16, dtype="bfloat16")
    # Long list nodes (6 and 5 items, one at the root) and deep nesting, with momentum above 0.9 (a
    # solution that clamps momentum, or mutates only longer lists, fails more than one case).
    random_case("long_list_deep_nesting", LONG_DEEP, 0.05, 0.95)
    random_case("root_list_of_five", ROOT_LIST_5, 0.1, 0.999)
    random_case("bf16_long_list_deep_nesting", LONG_DEEP, 0.02, 0.9, bf16, dtype="bfloat16")

    # Values and a learning rate near the stated bound 1e15 (an update of order 1e29, still finite).
    def huge(cast: Any) -> Any:
        return lambda values: cast(np.clip(np.asarray(values) * 3e14, -MAX_ABS, MAX_ABS))

    def huge_case(name: str, lr: float, mom: float, cast: Any, dtype: str) -> None:
        trees = [random_tree(rng, MIXED, 1.0, huge(cast)) for _ in range(3)]
        add(name, *trees, lr, mom, dtype=dtype)

    huge_case("values_near_the_bound", 4e14, 0.9, f32, "float32")
    huge_case("bf16_values_near_the_bound", 2e14, 0.5, bf16, "bfloat16")
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
