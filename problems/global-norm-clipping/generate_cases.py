"""Write ``cases/hidden.json`` for global-norm-clipping (deterministic: same bytes on every run).

Run from anywhere: ``python problems/global-norm-clipping/generate_cases.py``.
Values are written as exact float32 numbers (exact bfloat16 numbers for bfloat16 cases), so converting the
JSON to the case dtype is exact and the judge sees the same inputs as this script.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from judge.casegen import bf16, f32, num, random_tree, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_240_611
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"


def _leaves(tree: Any) -> list[Any]:
    """Leaves of a Run-panel JSON tree in JAX's flattening order (dict keys sorted)."""
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in _leaves(tree[key])]
    if isinstance(tree, list) and tree and all(isinstance(item, dict) for item in tree):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


def _norm(tree: Any) -> float:
    """The global L2 norm of a Run-panel JSON tree, in float64."""
    return float(np.sqrt(sum(np.sum(np.square(np.asarray(leaf, np.float64))) for leaf in _leaves(tree))))


def _bf16_sum_gap(tree: Any) -> float:
    """How far (in float32 tolerances) a norm whose sums are rounded to bfloat16 lands from the true norm.

    Models ``jnp.sqrt(sum(jnp.sum(leaf**2) for leaf in leaves))`` on bfloat16 leaves under ``jax.jit`` on
    CPU: each leaf's sum is rounded to bfloat16, and so is the running total after every addition.
    """
    bf16 = ml_dtypes.bfloat16
    sums = [np.sum(np.square(np.asarray(leaf, np.float64))) for leaf in _leaves(tree)]
    true_norm = float(np.sqrt(sum(sums)))
    total = bf16(0.0)
    for s in sums:
        total = bf16(np.float32(total) + np.float32(bf16(s)))
    rounded_norm = float(np.sqrt(np.float32(total)))
    return abs(rounded_norm - true_norm) / (1e-6 + 1e-5 * true_norm)


def _bf16_tree(rng: np.random.Generator, shapes: Any, scale: float, min_gap: float = 30.0) -> Any:
    """Random bfloat16 values, redrawn until summing squares in bfloat16 is visibly wrong."""
    while True:
        tree = random_tree(rng, shapes, scale, bf16)
        if _bf16_sum_gap(tree) > min_gap:
            return tree


# A nesting of dicts that hold lists of dicts, with 0-d, 1-d, 2-d and 3-d leaves.
NESTED = {
    "encoder": {
        "blocks": [
            {"attn": {"q": (4, 4), "k": (4, 4)}, "mlp": [{"w": (4, 8)}, {"w": (8,)}]},
            {"attn": {"q": (4, 4), "k": (4, 4)}, "mlp": [{"w": (4, 8)}, {"w": (8,)}]},
        ],
        "norm": (),
    },
    "head": (3, 2, 2),
}
# A few thousand elements in three leaves (2,280 elements).
LARGE = {"embed": (32, 40), "proj": (8, 12, 10), "bias": (40,)}
# A list node of 8 items beside a tower nested 10 containers deep.
LONG_DEEP = {
    "stages": [{"w": (4,), "b": ()} for _ in range(8)],
    "tower": {"l1": [{"l2": {"l3": [{"l4": {"l5": [{"w": (2, 2)}, {"w": (3,)}, {"w": ()}]}}]}}]},
}


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, grads: Any, max_norm: float, dtype: str = "float32") -> None:
        cases.append(
            {
                "name": name,
                "visibility": "hidden",
                "dtype": dtype,
                "args": {"grads": grads, "max_norm": num(max_norm)},
            }
        )

    # The statement's examples again: the same structure, shapes and dtype with other values, so a
    # submission that returns the published output whenever it recognises an example's structure fails.
    add("example_1_lookalike", {"w": f32([-1.5, 0.5]), "b": f32(2.25)}, 2.0)
    add(
        "example_2_lookalike",
        {"dense": {"w": f32([[1.5, -0.5], [0.25, 2.0]]), "b": f32([-1.0, 0.75])}, "head": f32([3.0])},
        2.5,
    )
    add(
        "example_3_lookalike",
        {"layers": [{"w": f32([0.5, -2.0])}, {"w": f32([1.0, 0.0])}, {"w": f32([0.25, 1.5])}]},
        1.0,
    )
    # The whole tree is one array: norm 3 > 1.5, so the vector is halved.
    add("bare_vector_clipped", f32([1.0, 2.0, 2.0]), 1.5)
    # The whole tree is one 0-d array whose norm is under the limit.
    add("bare_scalar_unchanged", f32(-0.75), 2.0)
    # Every gradient is zero: norm 0, scale 1, and no NaN from 0 / 0.
    add(
        "all_zero_gradients",
        {"a": {"w": f32(np.zeros((2, 3)))}, "b": [{"w": f32(np.zeros(4))}, {"w": f32(0.0)}]},
        1.0,
    )
    # 4 + 9 + 36 = 49: the float32 norm is exactly 7, equal to max_norm, so nothing changes.
    at_limit = {"a": f32([[[2.0, -3.0]], [[0.0, 6.0]]]), "b": [], "c": f32(0.0)}
    add("norm_equals_max_norm", at_limit, 7.0)
    # The same gradients with max_norm a hair under the norm: every leaf shrinks by 6.999 / 7.
    add("norm_just_over_max_norm", at_limit, 6.999)
    # 1 + 16 + 64 = 81: a second norm exactly at max_norm = 9 (a scale of 0 or anything but 1 there fails
    # on two cases, not one).
    add("norm_equals_max_norm_bare", f32([1.0, -4.0, 8.0]), 9.0)
    # Empty leaves of shape (0,) and (1, 0) next to ordinary ones, first and last in flatten order (a
    # formulation that works with an empty first leaf can fail with a later one); norm sqrt(6.5) > 1.
    add(
        "empty_leaves_mixed",
        {"a_empty": [], "w": f32([0.5, -1.5]), "s": f32(2.0), "z_empty_2d": [[]]},
        1.0,
    )
    # The only leaf is empty: the norm is 0 and the output is an empty leaf.
    add("only_empty_leaf", {"g": []}, 1.0)
    # Dicts of lists of dicts, clipped hard, then the same shapes well under the limit.
    add("nested_lists_of_dicts_clipped", random_tree(rng, NESTED, 0.5, f32), 1.0)
    add("nested_lists_of_dicts_unchanged", random_tree(rng, NESTED, 0.5, f32), 50.0)
    # A list of dicts as the root, with leaves of very different magnitudes (a per-leaf norm fails here).
    add(
        "root_list_mixed_magnitudes",
        [
            {"w": f32(rng.normal(size=(2, 3, 4)) * 20.0), "b": f32(rng.normal(size=3) * 1e-2)},
            {"w": f32(rng.normal(size=5) * 1e-3), "b": f32(0.375)},
        ],
        0.25,
    )
    # Thousands of random values: clipped (norm ~ 48 > 10), then small values that stay unchanged.
    add("large_random_clipped", random_tree(rng, LARGE, 1.0, f32), 10.0)
    add("large_random_unchanged", random_tree(rng, LARGE, 0.01, f32), 1.0)
    # bfloat16 leaves with non-round values, drawn so that summing the squares in bfloat16 gives a norm
    # more than 30 float32 tolerances away from the float32 sum (redrawn otherwise; still deterministic).
    add("bf16_nested_lists_of_dicts", _bf16_tree(rng, LONG_DEEP, 0.5), 1.0, "bfloat16")
    add("bf16_large_clipped", _bf16_tree(rng, LARGE, 1.0), 5.0, "bfloat16")
    add("bf16_large_unchanged", _bf16_tree(rng, LARGE, 0.01), 2.0, "bfloat16")
    add("bf16_bare_vector", _bf16_tree(rng, (300,), 1.0), 3.0, "bfloat16")
    # A list node of 8 items and a tower nested 10 containers deep (also in bfloat16 above).
    add("long_list_deep_nesting", random_tree(rng, LONG_DEEP, 1.0, f32), 2.0)

    # The norm, not its square, decides: a global norm between sqrt(c) and c (c > 1) stays unchanged, and
    # one between c and sqrt(c) (c < 1) is clipped. Comparing the sum of squares with max_norm gets both
    # wrong (compares_squared_norm.py). These reuse earlier shapes, so they add no compile signature.
    # 4 + 9 + 36 = 49: norm 7 under max_norm 10, but the sum of squares 49 is over it.
    add("unchanged_norm_between_sqrt_c_and_c", f32([2.0, -3.0, 6.0]), 10.0)
    # Norm 0.7 over max_norm 0.6, but the sum of squares 0.49 is under it.
    below_one = {"a": f32([[[0.2, -0.3]], [[0.0, 0.6]]]), "b": [], "c": f32(0.0)}
    add("clipped_norm_between_c_and_sqrt_c", below_one, 0.6)
    # The same with random values: max_norm = norm ** 1.5 lies between the norm and its square.
    tree = random_tree(rng, NESTED, 0.5, f32)
    add("nested_unchanged_norm_between_sqrt_c_and_c", tree, _norm(tree) ** 1.5)
    tree = random_tree(rng, LARGE, 0.01, bf16)
    add("bf16_large_clipped_norm_between_c_and_sqrt_c", tree, _norm(tree) ** 1.5, "bfloat16")
    # bfloat16 values near 1e-7 (norms near 1e-6), clipped: the scale must be exactly max_norm / norm. A
    # "safety" epsilon, max_norm / (norm + 1e-6), shrinks them by a third or more, tens of bfloat16 ulps
    # (small_epsilon.py); in float32 the absolute tolerance of 1e-6 hides it, in bfloat16 nothing does.
    # max_norm is an exact bfloat16 number, so scaling in bfloat16 (optax_style.py) rounds once less and
    # stays within 1 ulp.
    tree = random_tree(rng, (300,), 1e-7, bf16)
    add("bf16_tiny_values_clipped", tree, bf16(_norm(tree) / 3.0), "bfloat16")
    tree = random_tree(rng, LONG_DEEP, 1e-7, bf16)
    add("bf16_tiny_nested_clipped", tree, bf16(_norm(tree) / 3.0), "bfloat16")

    # Values near the stated bound 1e15 (squares near 1e30, still finite in float32), with an empty leaf
    # between two others (the structure of norm_equals_max_norm, so no new compile signature).
    def huge(values: Any) -> Any:
        return f32(np.clip(np.asarray(values) * 3e14, -1e15, 1e15))

    tree = {"a": random_tree(rng, (2, 1, 2), 1.0, huge), "b": [], "c": random_tree(rng, (), 1.0, huge)}
    add("values_near_the_bound_empty_middle_leaf", tree, 1e14)
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
