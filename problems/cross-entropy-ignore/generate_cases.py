"""Write ``cases/hidden.json`` for cross-entropy-ignore (deterministic: the same bytes on every run).

Run it after every change: ``python problems/cross-entropy-ignore/generate_cases.py``. ``judge check``
fails when the file differs from what this script writes. Logits are exact in float32 (``judge.casegen``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_210
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"
IGNORE = -100
MAX_ABS = 100.0


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, logits: Any, labels: Any) -> None:
        logits = np.clip(np.asarray(logits, dtype=np.float64), -MAX_ABS, MAX_ABS)
        args = {"logits": f32(logits), "labels": [int(v) for v in labels]}
        cases.append({"name": name, "visibility": "hidden", "dtype": "float32", "args": args})

    def labels(rows: int, classes: int, ignored: float) -> np.ndarray:
        out = rng.integers(0, classes, size=rows)
        out[rng.random(rows) < ignored] = IGNORE
        return out

    # The statement's examples again: the same shapes, other values (one ignored row; large logits; every
    # label ignored).
    add("example_1_lookalike", rng.normal(size=(3, 3)) * 2, [2, IGNORE, 1])
    add("example_2_lookalike", rng.uniform(60, 100, size=(2, 2)) * rng.choice([-1, 1], size=(2, 2)), [0, 1])
    add("example_3_lookalike", rng.normal(size=(1, 2)) * 3, [1])
    # A batch of 64 rows of 32 classes, a quarter ignored.
    add("quarter_ignored", rng.normal(size=(64, 32)) * 3, labels(64, 32, 0.25))
    # Most rows ignored: dividing by all rows instead of the counted ones is far off.
    add("most_ignored", rng.normal(size=(40, 10)) * 2, labels(40, 10, 0.9))
    # No row ignored.
    add("none_ignored", rng.normal(size=(16, 8)), labels(16, 8, 0.0))
    # Every label ignored in a large batch: 0 and 0, where sum / count is NaN.
    add("every_label_ignored", rng.normal(size=(12, 5)), [IGNORE] * 12)
    add("every_label_ignored_large_logits", rng.uniform(-100, 100, size=(3, 40)), [IGNORE] * 3)
    # Logits at the bound, +-100, with rows whose largest logit is not the label: exp overflows unshifted.
    big = rng.choice([-MAX_ABS, MAX_ABS, 95.0, -60.0, 99.5], size=(24, 6))
    add("logits_at_the_bound", big, labels(24, 6, 0.2))
    # Confident and wrong: the label's logit 100 below the largest (losses near 200).
    wrong = np.full((8, 4), -MAX_ABS)
    wrong[:, 0] = MAX_ABS
    add("confident_and_wrong", wrong + rng.uniform(0, 0.5, size=(8, 4)), [1, 2, 3, 1, IGNORE, 2, 3, 1])
    # One class: every counted row's loss is 0.
    add("one_class", rng.normal(size=(10, 1)) * 50, labels(10, 1, 0.3))
    # 256 classes, the most allowed, 15 rows; the labels use the first and last classes too.
    wide = labels(15, 256, 0.2)
    wide[:2] = [0, 255]
    add("most_classes", rng.normal(size=(15, 256)) * 10, wide)
    # 256 rows, the most allowed, 15 classes; a single row with its label counted.
    add("most_rows", rng.normal(size=(256, 15)) * 4, labels(256, 15, 0.5))
    add("one_row", rng.normal(size=(1, 7)) * 5, [6])
    # Ignored rows with logits far larger than the others: gathering them anyway moves the loss.
    skewed = rng.normal(size=(20, 6))
    skewed[::2] *= 40
    skewed_labels = labels(20, 6, 0.0)
    skewed_labels[::2] = IGNORE
    add("ignored_rows_with_large_logits", skewed, skewed_labels)
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
