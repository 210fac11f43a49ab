"""Write ``cases/hidden.json`` for ema-scan (deterministic: the same bytes on every run).

Run it after every change: ``python problems/ema-scan/generate_cases.py``. ``judge check`` fails when the
file differs from what this script writes. Values are exact in the case dtype (``judge.casegen``), so the
judge sees exactly these inputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import bf16, f32, num, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_201
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, xs: Any, init: Any, decay: float, dtype: str = "float32") -> None:
        cast = bf16 if dtype == "bfloat16" else f32
        args = {"xs": cast(xs), "init": cast(init), "decay": num(decay)}
        cases.append({"name": name, "visibility": "hidden", "dtype": dtype, "args": args})

    def noise(shape: tuple[int, ...], scale: float = 1.0, mean: float = 0.0) -> Any:
        return mean + scale * rng.normal(size=shape)

    # The statement's examples again: the same shapes and dtype, other values and decays.
    add("example_1_lookalike", noise((3,), 2.0), noise((), 2.0), 0.3)
    add("example_2_lookalike", noise((2, 2), 5.0), noise((2,), 5.0), 0.8)
    add("example_3_lookalike", noise((3, 1, 2), 3.0), noise((1, 2)), 0.6)
    # A long 1-D sequence and a 0-d start far from it: ignoring init, or storing the average before the
    # update, is far off.
    add("long_vector_far_init", noise((64,), 1.0, 3.0), -20.0, 0.9)
    # Rows of 8 features over 16 steps (not square, so scanning the feature axis gives the wrong shape).
    add("rows_of_features", noise((16, 8), 2.0), noise((8,), 4.0), 0.75)
    # A square (8, 8): scanning axis 1 instead of axis 0 keeps the shape, but not the values.
    add("square_steps", noise((8, 8), 3.0) + np.arange(8.0)[:, None] * 2.0, noise((8,), 1.0), 0.7)
    # 3-D steps (a (4, 5) state) with a slow average.
    add("matrix_state", noise((10, 4, 5), 2.0, 1.0), noise((4, 5), 2.0), 0.95)
    # A long, slow average: decay 0.99 over 200 steps never forgets init (0.99^200 is 0.13).
    add("slow_average_200_steps", np.sin(np.arange(200) / 7.0) * 3.0 + noise((200,), 0.5), 10.0, 0.99)
    # A single step: the result is decay * init + (1 - decay) * xs[0].
    add("single_step", noise((1, 3), 2.0), noise((3,), 2.0), 0.25)
    # decay 0 copies xs; decay 1 repeats init at every step.
    add("decay_zero_copies_xs", noise((64,), 2.0), 7.0, 0.0)
    add("decay_one_keeps_init", noise((16, 8), 2.0), noise((8,), 2.0), 1.0)
    # Large magnitudes: a step change from -500 to 800.
    steps = np.concatenate([np.full((8, 8), -500.0), np.full((8, 8), 800.0)]) + noise((16, 8), 10.0)
    add("large_step_change", steps, noise((8,), 100.0), 0.6)
    # bfloat16: the average must be carried in float32. With decay 0.995 each update moves the average by
    # half a percent of the gap, below bfloat16's relative spacing of 2^-8 to 2^-7: a bfloat16 carry
    # rounds the updates and drifts far from the float32 average.
    add("bf16_slow_average", noise((64,), 0.05, 2.0), 1.0, 0.995, "bfloat16")
    add("bf16_matrix_state", noise((32, 4, 4), 0.1, 5.0), noise((4, 4), 0.1, 3.0), 0.99, "bfloat16")
    add("bf16_rows_of_features", noise((16, 8), 1.0), noise((8,), 4.0), 0.9, "bfloat16")
    add("bf16_decay_near_one", noise((64,), 0.2, -4.0), -2.0, 0.998, "bfloat16")
    # Values near the stated bound 2**100 (decay * m + (1 - decay) * x stays below it), and a sequence of
    # 4,064 elements, near the 4,096 a catalog case holds (init and decay count too): 254 steps of a (4, 4)
    # state.
    huge = 2.0**100
    add("values_near_the_bound", np.clip(noise((12, 3), huge / 3), -huge, huge), noise((3,), huge / 3), 0.9)
    add("bf16_values_near_the_bound", np.clip(noise((12,), huge / 3), -huge, huge), huge / 2, 0.5, "bfloat16")
    add("most_elements_254_steps", noise((254, 4, 4), 1.0, 1.0), noise((4, 4), 1.0), 0.99)
    # Empty steps, as the statement allows: every step holds no value, so the result is T empty steps (one
    # case: the catalog's 16 compile signatures are all used).
    add("empty_steps", np.zeros((3, 2, 0)), np.zeros((2, 0)), 0.9)
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
