"""Write ``cases/hidden.json`` for hessian-vector-product (deterministic: same bytes on every run).

Run from anywhere: ``python problems/hessian-vector-product/generate_cases.py``.
Values are written as exact float32 numbers. Every menu function is used on several structures, so a
solution that ignores ``f`` (a formula for one function, another function of the menu) fails several cases.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, random_tree, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_202
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"

# A dict holding a list of three dicts, with 0-d to 3-d leaves and empty leaves after the first in flatten
# order ("padding" sorts between "layers" and "scale", and a (2, 0) leaf inside the list): code that only
# copes with an empty first leaf, or splits a flat vector by offsets, goes wrong here.
MIXED = {
    "layers": [{"w": (3, 2), "b": (2,)}, {"w": (2, 0), "b": ()}, {"w": (2, 2, 2)}],
    "scale": (),
    "padding": (0,),
}
# Nested six containers deep.
DEEP = {"encoder": {"blocks": [{"attn": {"q": (2, 2), "k": (2,)}}, {"mlp": [{"w": (3,)}, {"w": ()}]}]}}
# A list of four dicts as the root.
ROOT_LIST = [{"w": (3,), "b": ()} for _ in range(4)]
LARGE = {"w1": (16, 24), "w2": (24, 8), "b": (24,)}
# Over a hundred entries with a 3-d leaf, and a list of three dicts: forming the n x n Hessian costs
# hundreds of times the reference's FLOPs on these and the LARGE cases (the [cost] rule).
WIDE = {"w": (4, 8, 4), "b": (32,)}
WIDE_LIST = [{"w": (8, 8), "b": (8,)} for _ in range(3)]


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, f: str, shapes: Any, scale: float) -> None:
        x = random_tree(rng, shapes, scale, f32)
        v = random_tree(rng, shapes, 1.0, f32)
        cases.append(
            {"name": name, "visibility": "hidden", "dtype": "float32", "args": {"f": f, "x": x, "v": v}}
        )

    # The statement's examples again: the same function, structure and shapes with other values.
    add("example_1_lookalike", "quartic", {"w": (2,), "b": ()}, 2.0)
    add("example_2_lookalike", "coupled_cosine", (3,), 1.0)
    add("example_3_lookalike", "log_sum_exp", [{"w": ()}, {"w": ()}], 1.0)
    # Every function on a mixed nesting with empty leaves inside.
    for f in ("quartic", "coupled_cosine", "log_sum_exp", "soft_norm"):
        add(f"mixed_{f}", f, MIXED, 1.5)
    # A 0-d x, deep nesting, a list of four dicts as the root, and about 600 entries.
    add("bare_scalar_soft_norm", "soft_norm", (), 2.0)
    add("deep_quartic", "quartic", DEEP, 1.0)
    add("deep_soft_norm", "soft_norm", DEEP, 3.0)
    add("root_list_coupled_cosine", "coupled_cosine", ROOT_LIST, 2.0)
    add("root_list_log_sum_exp", "log_sum_exp", ROOT_LIST, 3.0)
    add("large_log_sum_exp", "log_sum_exp", LARGE, 2.0)
    add("large_coupled_cosine", "coupled_cosine", LARGE, 1.0)
    # Appended last, so the cases above keep their values.
    add("wide_quartic", "quartic", WIDE, 1.0)
    add("wide_list_soft_norm", "soft_norm", WIDE_LIST, 2.0)
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
