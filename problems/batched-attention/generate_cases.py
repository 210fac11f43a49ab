"""Write ``cases/hidden.json`` for batched-attention (deterministic: the same bytes on every run).

Run it after every change: ``python problems/batched-attention/generate_cases.py``. ``judge check``
fails when the file differs from what this script writes. Values are exact in the case dtype
(``judge.casegen``), so the judge sees exactly these inputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import bf16, f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_261_130
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []

    def add(name: str, dtype: str, q: Any, k: Any, v: Any, mask: Any) -> None:
        cast = bf16 if dtype == "bfloat16" else f32
        args = {
            "q": cast(np.clip(q, -100.0, 100.0).tolist()),
            "k": cast(np.clip(k, -100.0, 100.0).tolist()),
            "v": cast(np.clip(v, -100.0, 100.0).tolist()),
            "mask": np.asarray(mask, dtype=bool).tolist(),
        }
        cases.append({"name": name, "visibility": "hidden", "dtype": dtype, "args": args})

    def normal(*shape: int, scale: float = 1.0) -> Any:
        return rng.normal(0.0, scale, size=shape)

    def padding(batch: int, keys: int, lengths: list[int]) -> Any:
        return np.arange(keys)[None, :] < np.asarray(lengths)[:, None]

    def causal(batch: int, size: int) -> Any:
        return np.broadcast_to(np.tril(np.ones((size, size), dtype=bool)), (batch, size, size))

    def random_mask(*shape: int, p: float, empty_rows: int = 0) -> Any:
        mask = rng.random(shape) < p
        flat = mask.reshape(-1, shape[-1])
        for row in rng.choice(flat.shape[0], size=empty_rows, replace=False):
            flat[row] = False
        return flat.reshape(shape)

    def case(
        name: str, dtype: str, b: int, t: int, s: int, d: int, dv: int, mask: Any, *, scale: float = 1.5
    ) -> None:
        # Masked keys get the largest scores in some rows: ignoring the mask then moves the output far.
        add(
            name,
            dtype,
            normal(b, t, d, scale=scale),
            normal(b, s, d, scale=scale),
            normal(b, s, dv, scale=3.0),
            mask,
        )

    # The examples' shapes and mask ranks again, with other values (and other outputs).
    case("example_1_lookalike", "float32", 1, 2, 2, 4, 2, [[[True, True], [False, True]]])
    case("example_2_lookalike", "float32", 2, 1, 3, 1, 1, [[True, False, True], [True, True, True]])
    case("example_3_lookalike", "float32", 1, 2, 2, 1, 2, [[False, True]], scale=20.0)
    # Causal self-attention, (B, T, S) masks.
    case("causal_self_attention", "float32", 2, 8, 8, 8, 4, causal(2, 8))
    case("causal_large_scores", "float32", 2, 8, 8, 8, 4, causal(2, 8), scale=12.0)
    # Key padding of shape (B, S); scores of several hundred overflow exp without the maximum subtracted.
    case("padding_large_scores", "float32", 4, 6, 10, 16, 8, padding(4, 10, [10, 7, 3, 1]), scale=8.0)
    case("padding_small_scores", "float32", 4, 6, 10, 16, 8, padding(4, 10, [2, 9, 5, 10]), scale=0.5)
    # Fully masked rows: a whole padded sequence, and single query rows of a (B, T, S) mask.
    case("padding_empty_sequence", "float32", 3, 4, 5, 4, 2, padding(3, 5, [5, 0, 2]))
    case("padding_two_empty_sequences", "float32", 3, 4, 5, 4, 2, padding(3, 5, [0, 3, 0]), scale=6.0)
    case("fully_masked_query_rows", "float32", 3, 5, 7, 6, 3, random_mask(3, 5, 7, p=0.5, empty_rows=5))
    case(
        "fully_masked_rows_large_scores",
        "float32",
        3,
        5,
        7,
        6,
        3,
        random_mask(3, 5, 7, p=0.3, empty_rows=4),
        scale=10.0,
    )
    # d != dv and T != S: a scale of 1/sqrt(dv), or a softmax over the queries, is caught.
    case(
        "cross_attention_sparse_mask",
        "float32",
        2,
        16,
        12,
        32,
        8,
        random_mask(2, 16, 12, p=0.4, empty_rows=3),
    )
    case("cross_attention_padding", "float32", 2, 3, 9, 8, 5, padding(2, 9, [9, 4]), scale=3.0)
    case("largest_batch", "float32", 8, 4, 4, 8, 8, random_mask(8, 4, 4, p=0.7, empty_rows=2), scale=2.0)
    case("long_sequences", "float32", 2, 24, 24, 16, 16, causal(2, 24), scale=2.0)
    # bfloat16 inputs: the arithmetic runs in float32, the result is bfloat16.
    case("bf16_causal", "bfloat16", 2, 8, 8, 8, 4, causal(2, 8), scale=4.0)
    case("bf16_causal_large_scores", "bfloat16", 2, 8, 8, 8, 4, causal(2, 8), scale=10.0)
    case("bf16_padding_large_scores", "bfloat16", 4, 6, 10, 16, 8, padding(4, 10, [10, 0, 6, 2]), scale=8.0)
    case("bf16_padding", "bfloat16", 4, 6, 10, 16, 8, padding(4, 10, [3, 10, 0, 8]), scale=3.0)
    case(
        "bf16_fully_masked_rows",
        "bfloat16",
        3,
        5,
        7,
        6,
        3,
        random_mask(3, 5, 7, p=0.5, empty_rows=5),
        scale=5.0,
    )

    # Scores in the 30s with gaps of about 1: the softmax is far from one-hot and bfloat16 scores (spacing
    # 0.25 there) move the weights by several percent, so scores taken in bfloat16 fail.
    def close_scores(name: str, b: int, t: int, s: int, d: int, dv: int, mask: Any) -> None:
        q = 8.0 + normal(b, t, d, scale=0.5)
        k = 1.0 + normal(b, s, d, scale=0.1)
        add(name, "bfloat16", q, k, normal(b, s, dv, scale=3.0), mask)

    close_scores("bf16_close_scores_padding", 4, 6, 10, 16, 8, padding(4, 10, [10, 9, 7, 4]))
    close_scores("bf16_close_scores_causal", 2, 8, 8, 8, 4, causal(2, 8))

    # Values of opposite signs with near-equal weights: the output is a small difference of two large
    # products, so weights rounded to bfloat16 before the weighted sum (the statement keeps it in float32)
    # leave an error of many ulps of the output. Scores are tiny (q ~ 0.004, k 0 or 1): weights ~ 0.5.
    tiny_q = [n / 512 for n in (2, 1, -1, -2, -4, 4, -3, 3)]
    add(
        "bf16_cancelling_values",
        "bfloat16",
        [[[x] for x in tiny_q]],
        [[[0.0], [1.0]]],
        [[[96.0], [-96.0]]],
        [[True, True]],
    )
    add(
        "bf16_cancelling_values_padding",
        "bfloat16",
        [[[x, -x] for x in tiny_q[:4]], [[-x, 2 * x] for x in tiny_q[4:]]],
        [[[0.0, 0.0], [1.0, 1.0], [50.0, -50.0]], [[1.0, 0.0], [0.0, 1.0], [-2.0, 3.0]]],
        [[[80.0, -48.0], [-80.0, 48.0], [100.0, 100.0]], [[-72.0, 64.0], [72.0, -64.0], [-100.0, 9.0]]],
        [[True, True, False], [True, True, False]],
    )
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
