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
    # The largest d and dv (64); one key per sequence (S = 1: the softmax of a row is 1, or 0 when masked).
    case(
        "cross_attention_sparse_mask",
        "float32",
        1,
        16,
        12,
        64,
        64,
        random_mask(1, 16, 12, p=0.4, empty_rows=3),
    )
    case("cross_attention_one_key", "float32", 2, 3, 1, 8, 5, padding(2, 1, [1, 0]), scale=3.0)
    case("largest_batch", "float32", 8, 4, 4, 8, 8, random_mask(8, 4, 4, p=0.7, empty_rows=2), scale=2.0)
    # The longest sequences: 64 queries and 64 keys.
    case("long_sequences", "float32", 1, 64, 64, 16, 16, padding(1, 64, [50]), scale=2.0)
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

    # Scores in the tens of thousands (the statement's bound: |q.k|/sqrt(d) up to 80,000), exact in float32
    # whatever the summation order: integer q and k (exact in bfloat16 too), d = 16 or 64 so sqrt(d) is a
    # power of two. Every key is +K or -K (K shared by the keys of a sequence) plus a small part of its own,
    # every query +-Q aligned with K: a row's scores form two clusters near +C and -C. The mask lets some
    # rows see only the -C cluster while keys of the +C cluster are masked: a finite fill such as -1e4
    # (where(mask, s, -1e4), or adding -1e4 to masked scores) is then no longer "minus infinity", and the
    # masked keys take the weight (or every allowed weight underflows). Exp of the raw scores overflows.
    def large_scores(name: str, dtype: str, b: int, t: int, s: int, d: int, dv: int, mask: Any) -> None:
        close = dtype == "bfloat16"
        fine = 2 if close else 1  # the last coordinates: the keys' own parts
        coarse = d - fine
        k_sign = np.where(rng.random((b, s)) < 0.5, -1, 1)
        q_sign = np.where(rng.random((b, t)) < 0.5, -1, 1)
        base = rng.integers(70, 101, size=(b, 1, coarse)) * np.where(rng.random((b, 1, coarse)) < 0.5, -1, 1)
        if mask is not None:  # (B, S) key padding: the kept keys are -K, the padding +K
            k_sign = np.where(mask, -1, 1)
        if close:  # parts of -3..3: the scores of a cluster lie within a few units, in steps of 1/4
            k_own = rng.integers(-3, 4, size=(b, s, fine))
            q_own = rng.integers(-3, 4, size=(b, t, fine))
        else:  # distinct parts 200 // S apart and |q| >= 40: a cluster's scores 30 or more apart
            step = max(1, 200 // s)
            k_own = np.stack([rng.permutation(np.arange(s) * step - 100)[:, None] for _ in range(b)])
            q_own = rng.integers(40, 101, size=(b, t, fine)) * np.where(rng.random((b, t, fine)) < 0.5, -1, 1)
        k = np.concatenate([k_sign[..., None] * base, k_own], axis=-1)
        q = np.concatenate(
            [q_sign[..., None] * np.sign(base) * rng.integers(70, 101, size=(b, t, coarse)), q_own], -1
        )
        if mask is None:  # (B, T, S): rows of +Q see only keys of the -K cluster, and not all of them
            allowed = (q_sign[:, :, None] * k_sign[:, None, :] < 0) & (rng.random((b, t, s)) < 0.8)
            mask = np.where(q_sign[:, :, None] > 0, allowed, rng.random((b, t, s)) < 0.5)
        add(name, dtype, q.astype(float), k.astype(float), normal(b, s, dv, scale=3.0), mask)

    # float32: a cluster's scores lie 30 or more apart, so the softmax is one-hot within float32's precision
    # (close float32 scores near 4e4 would put float32's own rounding of a logsumexp, 2e-3 of every weight,
    # past the float32 tolerance: a correct formulation would fail).
    large_scores("large_scores_d64", "float32", 1, 16, 12, 64, 64, None)
    large_scores("large_scores_long_padding", "float32", 1, 64, 64, 16, 16, padding(1, 64, [37]))
    # bfloat16: scores near +-25,000 within a few units of each other (bfloat16's spacing there is 128, so
    # scores rounded to bfloat16 collapse), exact in float32 (quarters: d = 16).
    pad = padding(4, 10, [6, 3, 10, 8])
    large_scores("bf16_large_close_scores_padding", "bfloat16", 4, 6, 10, 16, 8, pad)
    large_scores(
        "bf16_large_close_scores_padding_2", "bfloat16", 4, 6, 10, 16, 8, padding(4, 10, [4, 9, 7, 1])
    )

    # bfloat16 with d = 8, whose sqrt(d) is no power of two, so the scale 1/sqrt(d) rounds, and scores past
    # 10,000 among the pairs (the promise "For bfloat16 inputs"). The shortcut these catch scales the queries
    # in bfloat16 before the product (wrong_answer/scales_queries_in_bfloat16.py): each entry of q / sqrt(d)
    # is off by up to 1/256 of itself, which moves a score by sum_i err_i * k_i, tens of units. A softmax
    # ignores a shift shared by a row's allowed keys, and in the clusters above the keys share their large
    # coordinates, so every allowed score moved alike and the shortcut passed there (0.17x and 0.33x the
    # tolerance). Here each query t sees two keys, t and t + 1 (the last query: 0 and 7), 10 or more apart
    # in every coordinate yet scoring within 3 of each other for that query, exactly (integer q and k: q . k
    # is exact in float32, and a float32 scale moves a score by thousandths). The shortcut moves the two
    # scores by different tens of units, so the pair's weights go from comparable to all on one key.
    # (Scaling in bfloat16 and upcasting before a float32 product is not caught on CPU: XLA's CPU compiler
    # keeps that elementwise bfloat16 result in float32, unless --xla_allow_excess_precision=false.)
    # (The shapes of bf16_causal: no new compile signature.)
    def scale_rounds(name: str, b: int, n: int, d: int, dv: int) -> None:
        def query() -> Any:
            return rng.integers(70, 101, size=d) * np.where(rng.random(d) < 0.5, -1, 1)

        def partner(q: Any, k: Any) -> Any:
            """A key 10 or more from k in every coordinate whose exact score for q is within 8 / sqrt(d) of
            k's: random, with its coordinate of q's largest entry solved for."""
            j = int(np.argmax(np.abs(q)))
            while True:
                other = rng.integers(-100, 101, size=d)
                other[j] = 0
                other[j] = round(float(q @ k - q @ other) / float(q[j]))
                if abs(other[j]) <= 100 and abs(int(q @ (other - k))) <= 8 and np.abs(other - k).min() >= 10:
                    return other

        qs, ks = [], []
        for _ in range(b):
            q = [query() for _ in range(n)]
            k = [rng.integers(-100, 101, size=d)]
            for t in range(n - 1):
                k.append(partner(q[t], k[t]))
            gap = k[n - 1] - k[0]
            j = int(np.argmax(np.abs(gap)))  # the last query: keys 0 and n - 1, its entry j solved for
            while True:
                last = query()
                last[j] = 0
                last[j] = -round(float(last @ gap) / float(gap[j]))
                if 40 <= abs(last[j]) <= 100 and abs(int(last @ gap)) <= 8:
                    break
            qs.append([*q[: n - 1], last])
            ks.append(k)
        mask = np.zeros((b, n, n), dtype=bool)
        for t in range(n - 1):
            mask[:, t, [t, t + 1]] = True
        mask[:, n - 1, [0, n - 1]] = True
        add(name, "bfloat16", np.asarray(qs, float), np.asarray(ks, float), normal(b, n, dv, scale=3.0), mask)

    scale_rounds("bf16_large_scores_scale_rounds", 2, 8, 8, 4)
    scale_rounds("bf16_large_scores_scale_rounds_2", 2, 8, 8, 4)
    return cases


if __name__ == "__main__":
    write(OUT, build_cases)
