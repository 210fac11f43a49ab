"""Write ``cases/hidden.json`` for grad-accumulation-scan (deterministic: same bytes on every run).

Run from anywhere: ``python problems/grad-accumulation-scan/generate_cases.py``.
Values are written as exact float32 numbers (exact bfloat16 numbers for bfloat16 cases), so converting the
JSON to the case dtype is exact and the judge sees the same inputs as this script.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import bf16, f32, map_shapes, num, random_tree, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_130
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"

# A dict holding a list of three dicts, with 0-d to 3-d leaves and an empty (0,) leaf after the first in
# flatten order ("padding" sorts between "layers" and "scale"): the statement's "may be empty" anywhere.
MIXED = {
    "layers": [{"w": (3, 2), "b": (2,)}, {"w": (2,), "b": ()}, {"w": (2, 2, 2)}],
    "scale": (),
    "padding": (0,),
}
# Nested five containers deep: a list inside a dict inside a list inside a dict.
DEEP = {"encoder": {"blocks": [{"attn": {"q": (2, 2), "k": (2,)}}, {"mlp": [{"w": (3,)}, {"w": ()}]}]}}
# A list of four dicts as the root.
ROOT_LIST = [{"w": (4,), "b": ()} for _ in range(4)]
# The largest tree: 90 parameters, so 32 microbatches of it stay within judge check's case-size rule
# (4096 array elements per case).
LARGE = {"w1": (4, 10), "w2": (10, 4), "b": (10,)}


def _xs(rng: np.random.Generator, shapes: Any, n: int, m: int, scale: float, cast: Any) -> Any:
    """Inputs shaped like ``shapes`` with the leading (n, m) microbatch axes."""
    return map_shapes(shapes, lambda shape: cast(rng.normal(size=(n, m, *shape)) * scale))


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, params: Any, xs: Any, target: float, dtype: str = "float32") -> None:
        cases.append(
            {
                "name": name,
                "visibility": "hidden",
                "dtype": dtype,
                "args": {"params": params, "xs": xs, "target": num(target)},
            }
        )

    def random_case(
        name: str, shapes: Any, n: int, m: int, target: float, cast: Any = f32, dtype: str = "float32"
    ) -> None:
        params = random_tree(rng, shapes, 0.5, cast)
        add(name, params, _xs(rng, shapes, n, m, 1.0, cast), target, dtype)

    # The statement's examples again: the same structure, shapes and dtype with other values.
    random_case("example_1_lookalike", {"w": (2,), "b": ()}, 2, 2, 0.5)
    random_case("example_2_lookalike", (2,), 3, 1, -1.0)
    random_case("example_3_lookalike", [{"w": ()}, {"w": ()}], 1, 2, 2.0)
    # A 0-d parameter: xs is one (n, m) array.
    random_case("bare_scalar_param", (), 5, 3, 1.5)
    # Mixed nesting with eight microbatches that differ a lot: summing instead of averaging, or keeping only
    # the first or the last microbatch, is far off.
    random_case("mixed_eight_microbatches", MIXED, 8, 4, 0.0)
    random_case("deep_nesting", DEEP, 3, 5, -2.0)
    random_case("root_list_of_four", ROOT_LIST, 4, 2, 1.0)
    # Many microbatches of a few examples, and a few microbatches of many examples.
    random_case("large_many_microbatches", LARGE, 16, 2, 0.25)
    random_case("large_few_microbatches", LARGE, 2, 16, -0.5)
    # A target far from every prediction: the residuals are dominated by it.
    random_case("far_target", MIXED, 8, 4, 50.0)
    # Microbatches with very different scales: the average is not the last one or the first one.
    params = random_tree(rng, MIXED, 0.5, f32)
    xs = _xs(rng, MIXED, 8, 4, 1.0, lambda v: v)
    scales = np.array([0.1, 3.0, 0.5, 2.0, 1.0, 0.2, 4.0, 0.3]).reshape(8, 1, 1)

    def scaled(tree: Any) -> Any:
        if isinstance(tree, dict):
            return {k: scaled(v) for k, v in tree.items()}
        if isinstance(tree, list):
            return [scaled(v) for v in tree]
        return f32(tree * scales.reshape((8, 1) + (1,) * (tree.ndim - 2)))

    add("uneven_microbatches", params, scaled(xs), 0.0)
    # bfloat16 leaves: arithmetic in float32, gradients cast back to bfloat16, the loss float32.
    random_case("bf16_mixed", MIXED, 8, 4, 0.5, bf16, "bfloat16")
    random_case("bf16_large", LARGE, 4, 8, 0.0, bf16, "bfloat16")
    random_case("bf16_bare_vector", (32,), 6, 16, 1.0, bf16, "bfloat16")
    random_case("bf16_deep_nesting", DEEP, 3, 5, -2.0, bf16, "bfloat16")
    # One large microbatch, then many whose gradients are just under half a bfloat16 ulp of the running
    # sum: a sum carried in bfloat16 (instead of float32) rounds every later gradient away.
    small = 1.0 - 2.0**-8
    add("bf16_one_large_then_small_microbatches", 1.0, [[16.0]] + [[small]] * 47, 0.0, "bfloat16")
    add(
        "bf16_list_one_large_then_small_microbatches",
        [{"w": [1.0, -1.0]}, {"w": 2.0}],
        [
            {"w": [[[16.0, 0.0], [0.0, 16.0]]] + [[[small, 0.0], [0.0, small]]] * 47},
            {"w": [[8.0, 8.0]] + [[0.5, 0.5]] * 47},
        ],
        0.0,
        "bfloat16",
    )

    # Values and targets near the stated bound 1e3 (predictions near 1e7, squares near 1e14): a float32
    # loss stays exact enough, and the average is still over every microbatch.
    def near_bound(values: Any) -> Any:
        return f32(np.clip(np.asarray(values) * 400.0, -1e3, 1e3))

    add(
        "values_near_the_bound",
        random_tree(rng, MIXED, 1.0, near_bound),
        _xs(rng, MIXED, 8, 4, 1.0, near_bound),
        900.0,
    )
    add(
        "values_near_the_bound_negative_target",
        random_tree(rng, (2,), 1.0, near_bound),
        _xs(rng, (2,), 3, 1, 1.0, near_bound),
        -1e3,
    )
    # 4,096 elements, the most a catalog case holds: 63 microbatches of 4 examples of 16 values, and params.
    random_case("many_elements", {"w": (16,)}, 63, 4, 1.0)
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
