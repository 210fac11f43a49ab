"""Write ``cases/hidden.json`` for lr-schedule (deterministic: same bytes on every run).

Run from anywhere: ``python problems/lr-schedule/generate_cases.py``.
Learning rates are written as exact float32 numbers, so the judge sees the same inputs as this script.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import num, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_130
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"

#: (name, warmup_steps, total_steps, peak_lr, final_lr). The first two are the examples' schedules.
SCHEDULES = [
    ("example", 10, 100, 0.1, 0.0),
    ("example_3", 20, 100, 0.5, 0.05),
    ("shortest", 1, 2, 1.0, 0.0),
    ("realistic", 500, 10_000, 3e-4, 3e-5),
    ("one_step_decay_tail", 1_000, 1_001, 0.01, 0.001),
    ("long", 7, 1_000_000, 0.2, 0.0),
    # Near the stated bounds: steps up to 10^7 and a final rate of half the peak.
    ("longest", 2_000_000, 9_999_900, 0.9, 0.5),
]
#: Bounds that interact, reached together: a step near 10^7 with a warmup that ends just before a short
#: decay (10 steps), where (s - W) / (T - W) is exact but s / (T - W) - W / (T - W) is not. (name, warmup,
#: total, peak, final, steps into the decay).
SHORT_DECAYS = [
    ("late_short_decay", 9_999_968, 9_999_978, 0.5, 0.01, [2, 5, 7, 9]),
]


def _steps(rng: np.random.Generator, warmup: int, total: int) -> list[tuple[str, int]]:
    """The steps that tell schedules apart: both ends of the warmup, both sides of its boundary, inside the
    decay, its last step and past it."""
    picks = [
        ("start", 0),
        ("first", 1),
        ("last_warmup", warmup - 1),
        ("boundary", warmup),
        ("after_boundary", warmup + 1),
        ("quarter_decay", warmup + (total - warmup) // 4),
        ("random_decay", int(rng.integers(warmup, total + 1))),
        ("last_decay", total - 1),
        ("end", total),
        ("past_end", total + 1 + int(rng.integers(0, 50))),
    ]
    seen: set[int] = set()
    out = []
    for name, step in picks:
        if step not in seen and step >= 0:
            seen.add(step)
            out.append((name, step))
    return out


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []
    for label, warmup, total, peak, final in SCHEDULES:
        for name, step in _steps(rng, warmup, total):
            args = {
                "step": step,
                "peak_lr": num(peak),
                "final_lr": num(final),
                "warmup_steps": warmup,
                "total_steps": total,
            }
            cases.append(
                {"name": f"{label}_{name}", "visibility": "hidden", "dtype": "float32", "args": args}
            )
    for label, warmup, total, peak, final, offsets in SHORT_DECAYS:
        for offset in offsets:
            args = {
                "step": warmup + offset,
                "peak_lr": num(peak),
                "final_lr": num(final),
                "warmup_steps": warmup,
                "total_steps": total,
            }
            cases.append(
                {"name": f"{label}_{offset}", "visibility": "hidden", "dtype": "float32", "args": args}
            )
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
