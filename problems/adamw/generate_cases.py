"""Write ``cases/hidden.json`` for adamw (deterministic: same bytes on every run).

Run from anywhere: ``python problems/adamw/generate_cases.py``.
Values are written as exact float32 numbers (exact bfloat16 numbers for bfloat16 cases), so converting the
JSON to the case dtype is exact and the judge sees the same inputs as this script.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import bf16, f32, map_shapes, num, random_tree, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_132
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"

# The examples' structures.
EXAMPLE_1 = {"w": (2,)}
EXAMPLE_2 = {"dense": {"w": (2, 2), "b": (2,)}, "scale": ()}
EXAMPLE_3 = [{"w": (2,)}, {"w": (1,)}]
# Dicts holding a list of dicts, with 0-d to 3-d leaves and an empty (0,) leaf.
MIXED = {
    "encoder": {"blocks": [{"w": (3, 4), "b": (4,)}, {"w": (4, 2), "b": (2,)}, {"w": (2, 2), "b": (2,)}]},
    "emb": (2, 3, 2),
    "scale": (),
    "empty": (0,),
}
# A list of five dicts as the root, with a tower nested 8 containers deep in it.
LONG_DEEP = [
    {"w": (3,), "b": ()},
    {"w": (2, 2)},
    {"deep": {"a": [{"b": {"c": [{"x": (2,)}, {"y": (3,)}]}}]}},
    {"w": (4,)},
    {"g": ()},
]
LARGE = {"layers": [{"w": (16, 16), "b": (16,)} for _ in range(3)], "head": (16, 4)}


def _uniform(
    rng: np.random.Generator, shapes: Any, low: float, high: float, cast: Callable[[Any], Any]
) -> Any:
    """Values uniform in [low, high], shaped like ``shapes``."""
    return map_shapes(shapes, lambda shape: cast(rng.uniform(low, high, size=shape)))


def _positive(rng: np.random.Generator, shapes: Any, cast: Callable[[Any], Any]) -> Any:
    """A second moment bounded away from 0, like one after a few real steps."""
    return _uniform(rng, shapes, 0.002, 0.05, cast)


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def case(
        name: str,
        shapes: Any,
        step: int,
        lr: float,
        wd: float,
        cast: Callable[[Any], Any] = f32,
        dtype: str = "float32",
        zero_moments: bool = False,
    ) -> None:
        params = random_tree(rng, shapes, 1.0, cast)
        grads = random_tree(rng, shapes, 0.3, cast)
        mu = random_tree(rng, shapes, 0.0 if zero_moments else 0.1, cast)
        nu = random_tree(rng, shapes, 0.0, cast) if zero_moments else _positive(rng, shapes, cast)
        args = {
            "params": params,
            "grads": grads,
            "mu": mu,
            "nu": nu,
            "step": step,
            "learning_rate": num(lr),
            "weight_decay": num(wd),
        }
        cases.append({"name": name, "visibility": "hidden", "dtype": dtype, "args": args})

    # The examples' structures again with other values (and other steps).
    case("example_1_lookalike", EXAMPLE_1, 0, 0.05, 0.02, zero_moments=True)
    case("example_2_lookalike", EXAMPLE_2, 3, 0.01, 0.1)
    case("example_3_lookalike", EXAMPLE_3, 1, 0.3, 0.05)
    # A bare vector and a bare scalar as the whole tree.
    case("bare_vector_first_step", (6,), 0, 0.01, 0.01, zero_moments=True)
    case("bare_scalar", (), 2, 0.1, 0.0)
    # Early steps, where the bias correction matters most; late ones, where it hardly does.
    case("mixed_step_0", MIXED, 0, 0.001, 0.01, zero_moments=True)
    case("mixed_step_1", MIXED, 1, 0.01, 0.05)
    case("mixed_step_9", MIXED, 9, 0.02, 0.1)
    case("mixed_step_99", MIXED, 99, 0.05, 0.3)
    case("mixed_step_100000", MIXED, 100_000, 0.01, 0.01)
    # No weight decay at all, and a strong one.
    case("mixed_no_decay", MIXED, 4, 0.01, 0.0)
    case("mixed_strong_decay", MIXED, 4, 0.1, 0.9)
    # Long list nodes and deep nesting.
    case("long_list_deep_nesting", LONG_DEEP, 2, 0.01, 0.05)
    case("long_list_deep_nesting_late", LONG_DEEP, 999, 0.05, 0.2)
    case("large", LARGE, 7, 0.003, 0.05)
    # bfloat16: the results stay bfloat16 (computed in float32, cast back).
    case("bf16_mixed_step_0", MIXED, 0, 0.01, 0.01, bf16, "bfloat16", zero_moments=True)
    case("bf16_mixed_step_5", MIXED, 5, 0.05, 0.1, bf16, "bfloat16")
    case("bf16_long_list_deep_nesting", LONG_DEEP, 1, 0.1, 0.05, bf16, "bfloat16")
    case("bf16_large", LARGE, 20, 0.02, 0.2, bf16, "bfloat16")
    case("bf16_bare_vector", (40,), 2, 0.05, 0.1, bf16, "bfloat16")

    def custom(name: str, step: int, lr: float, wd: float, dtype: str = "float32", **trees: Any) -> None:
        args = {**trees, "step": step, "learning_rate": num(lr), "weight_decay": num(wd)}
        cases.append({"name": name, "visibility": "hidden", "dtype": dtype, "args": args})

    def signed(shapes: Any, low: float, high: float, cast: Callable[[Any], Any]) -> Any:
        """Magnitudes uniform in [low, high] with random signs, shaped like ``shapes``."""

        def leaf(shape: tuple[int, ...]) -> Any:
            return cast(rng.uniform(low, high, size=shape) * rng.choice([-1.0, 1.0], size=shape))

        return map_shapes(shapes, leaf)

    def zeros(shapes: Any, cast: Callable[[Any], Any]) -> Any:
        return random_tree(rng, shapes, 0.0, cast)

    # Gradients near 1e-6, so sqrt(v_hat) is close to epsilon: epsilon must be added after the square
    # root, to sqrt(v_hat) itself. Adding it under the root (sqrt(v_hat + eps), eps_inside_sqrt.py) shrinks
    # the step about a hundredfold, and Kingma and Ba's eps-hat form (eps added to sqrt(v') before the bias
    # correction, eps_hat_form.py) by up to a quarter. These reuse earlier shapes: no new compile signature.
    custom(
        "tiny_grads_first_step",
        0,
        0.01,
        0.01,
        params=random_tree(rng, MIXED, 1.0, f32),
        grads=signed(MIXED, 5e-7, 2e-6, f32),
        mu=zeros(MIXED, f32),
        nu=zeros(MIXED, f32),
    )
    custom(
        "tiny_moments_step_3",
        3,
        0.01,
        0.0,
        params=random_tree(rng, LARGE, 1.0, f32),
        grads=signed(LARGE, 5e-7, 2e-6, f32),
        mu=signed(LARGE, 5e-7, 2e-6, f32),
        nu=_uniform(rng, LARGE, 1e-15, 1e-14, f32),
    )
    # bfloat16 with learning_rate = weight_decay = 1, so p - lr * (u + wd * p) cancels to -u: computed in
    # float32 the result is about +-1, but computed in bfloat16 (bf16_arithmetic.py) u + p is rounded to
    # the spacing of p (0.5 to 2 for |p| in 100..300) and the result is off by up to a whole unit.
    custom(
        "bf16_cancelling_decay_first_step",
        0,
        1.0,
        1.0,
        "bfloat16",
        params=signed(MIXED, 100.0, 300.0, bf16),
        grads=signed(MIXED, 0.1, 0.5, bf16),
        mu=zeros(MIXED, bf16),
        nu=zeros(MIXED, bf16),
    )
    custom(
        "bf16_cancelling_decay_step_3",
        3,
        1.0,
        1.0,
        "bfloat16",
        params=signed((40,), 100.0, 300.0, bf16),
        grads=signed((40,), 0.1, 0.5, bf16),
        mu=random_tree(rng, (40,), 0.1, bf16),
        nu=_positive(rng, (40,), bf16),
    )
    # Gradients and first moments near the stated bound 1e3, second moments near 1e6, and a learning
    # rate of 0 (params change by nothing, the moments still update).
    for name, lr, cast, dtype in (
        ("values_near_the_bound", 0.5, f32, "float32"),
        ("values_near_the_bound_no_step", 0.0, f32, "float32"),
        ("bf16_values_near_the_bound", 0.25, bf16, "bfloat16"),
    ):
        custom(
            name,
            5,
            lr,
            0.1,
            dtype,
            params=signed(MIXED, 100.0, 1e3, cast),
            grads=signed(MIXED, 100.0, 1e3, cast),
            mu=signed(MIXED, 100.0, 1e3, cast),
            nu=_uniform(rng, MIXED, 1e5, 1e6, cast),
        )
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
