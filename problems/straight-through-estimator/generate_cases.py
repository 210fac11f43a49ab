"""Write ``cases/hidden.json`` for straight-through-estimator (deterministic: same bytes on every run).

Run from anywhere: ``python problems/straight-through-estimator/generate_cases.py``.
Values are written as exact float32 numbers (exact bfloat16 numbers for bfloat16 cases). About a quarter of
them are exact halves (k + 0.5), where rounding ties to the even neighbour.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import bf16, f32, map_shapes, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_201
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"

# A dict holding a list of three dicts, with 0-d to 3-d leaves and an empty (0,) leaf after the first in
# flatten order ("padding" sorts between "layers" and "scale"): the statement's "may be empty" anywhere.
MIXED = {
    "layers": [{"w": (3, 4), "b": (4,)}, {"w": (4,), "b": ()}, {"w": (2, 2, 3)}],
    "scale": (),
    "padding": (0,),
}
# Nested six containers deep.
DEEP = {"encoder": {"blocks": [{"attn": {"q": (2, 3), "k": (3,)}}, {"mlp": [{"w": (5,)}, {"w": ()}]}]}}
# A list of five dicts as the root.
ROOT_LIST = [{"w": (3,), "b": ()} for _ in range(5)]
LARGE = {"w1": (24, 40), "w2": (40, 8), "b": (40,)}


def _values(rng: np.random.Generator, shape: tuple[int, ...], scale: float) -> np.ndarray:
    """Normal values times ``scale``, a quarter of them replaced by exact halves."""
    values = rng.normal(size=shape) * scale
    halves = np.floor(values) + 0.5
    return np.where(rng.random(size=shape) < 0.25, halves, values)


def _tree(rng: np.random.Generator, shapes: Any, scale: float, cast: Any) -> Any:
    return map_shapes(shapes, lambda shape: cast(_values(rng, shape, scale)))


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, shapes: Any, scale: float, cast: Any = f32, dtype: str = "float32") -> None:
        cases.append(
            {
                "name": name,
                "visibility": "hidden",
                "dtype": dtype,
                "args": {"x": _tree(rng, shapes, scale, cast)},
            }
        )

    # The statement's examples again: the same structure, shapes and dtype with other values.
    add("example_1_lookalike", {"w": (3,), "b": ()}, 3.0)
    add("example_2_lookalike", (4,), 3.0)
    add("example_3_lookalike", {"layers": [{"w": (2, 2)}, {"w": ()}]}, 5.0)
    # Bare arrays: a 0-d scalar, and a vector of values between -3 and 3 (many ties).
    add("bare_scalar", (), 2.0)
    add("bare_vector_small", (64,), 1.5)
    add("mixed_nesting", MIXED, 4.0)
    add("deep_nesting", DEEP, 10.0)
    add("root_list_of_five", ROOT_LIST, 2.0)
    # Large magnitudes (up to a few thousand) and values well inside (-1, 1).
    add("large_values", LARGE, 1000.0)
    add("values_below_one", LARGE, 0.3)
    # bfloat16: values, rounding and gradient all stay bfloat16.
    add("bf16_mixed_nesting", MIXED, 4.0, bf16, "bfloat16")
    add("bf16_large", LARGE, 50.0, bf16, "bfloat16")
    add("bf16_bare_vector", (200,), 2.0, bf16, "bfloat16")
    add("bf16_root_list_of_five", ROOT_LIST, 3.0, bf16, "bfloat16")

    # Values near the stated bound 1e6 (float32 halves still exist below 2**23), and 4,096 elements, the
    # most a catalog case holds (problem.toml's [reach] says so for the element bound).
    def near_bound(values: Any) -> Any:
        return f32(np.clip(values, -1e6, 1e6))

    cases.append(
        {
            "name": "values_near_the_bound",
            "visibility": "hidden",
            "dtype": "float32",
            "args": {"x": map_shapes(MIXED, lambda shape: near_bound(_values(rng, shape, 3e5)))},
        }
    )
    add("many_elements", (4096,), 20.0)
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
