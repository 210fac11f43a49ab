"""Write ``cases/hidden.json`` for rotary-embedding (deterministic: the same bytes on every run).

Run from anywhere: ``python problems/rotary-embedding/generate_cases.py``. Values are exact in the case
dtype (``judge.casegen``). Each (shape, dtype) is one compile; the 15 signatures below (the examples' three
among them) hold 2 or 3 cases each, with positions that start at 0, start late (a decoding step), repeat,
jump around, and reach 4095, the stated bound: bfloat16 holds integers exactly only up to 256, so angles
computed in bfloat16 are off by whole radians there. Two more float32 cases (a 16th signature) put the
roundings of a bfloat16 cos/sin table at their largest (``_table_rounding_worst``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.casegen import bf16, f32, write
from judge.casegen import render as render  # re-exported: the case check renders with it

SEED = 20_260_228
OUT = Path(__file__).resolve().parent / "cases" / "hidden.json"
#: The largest position allowed (the validator's bound) and the largest magnitude used (bound 10^4).
TOP_POSITION = 4095
TOP_VALUE = 9_999.0

#: (label, dtype, (T, H, D), [(positions, scale of the values), ...]). The first three are the examples'.
SIGNATURES: list[tuple[str, str, tuple[int, int, int], list[tuple[str, float]]]] = [
    ("example_1_shape", "float32", (3, 1, 4), [("from_zero", 4.0), ("late", 4.0)]),
    ("example_2_shape", "float32", (2, 2, 2), [("random", 2.0), ("top", 1.0)]),
    ("example_3_shape", "float32", (1, 1, 4), [("top", 1.0), ("random", 8.0)]),
    ("prefill", "float32", (16, 4, 32), [("from_zero", 1.0), ("late", 1.0), ("random", 100.0)]),
    ("decode_chunk", "float32", (8, 4, 64), [("late", 1.0), ("top", 3.0)]),
    ("late_chunk", "float32", (32, 2, 32), [("top", 1.0), ("repeated", 0.01)]),
    ("small_heads", "float32", (20, 3, 8), [("repeated", 5.0), ("random", TOP_VALUE)]),
    ("one_token_wide_heads", "float32", (1, 8, 128), [("top", 1.0), ("random", 1.0), ("from_zero", 2.0)]),
    ("one_pair", "float32", (50, 1, 2), [("random", 1.0), ("from_zero", 1.0)]),
    ("longest_sequence", "float32", (256, 1, 14), [("from_zero", 1.0), ("late", 50.0)]),
    ("widest_case", "float32", (3, 8, 128), [("random", 1.0), ("top", TOP_VALUE)]),
    ("bf16_prefill", "bfloat16", (16, 4, 32), [("from_zero", 1.0), ("late", 1.0)]),
    ("bf16_late", "bfloat16", (12, 2, 64), [("top", 1.0), ("random", 100.0)]),
    ("bf16_random", "bfloat16", (40, 2, 16), [("random", 1.0), ("repeated", TOP_VALUE)]),
    ("bf16_decode", "bfloat16", (8, 1, 128), [("late", 2.0), ("top", 1.0)]),
]


def _positions(rng: np.random.Generator, kind: str, tokens: int) -> list[int]:
    if kind == "from_zero":
        return list(range(tokens))
    if kind == "late":
        start = int(rng.integers(300, TOP_POSITION + 2 - tokens))
        return list(range(start, start + tokens))
    if kind == "top":
        return list(range(TOP_POSITION + 1 - tokens, TOP_POSITION + 1))
    if kind == "repeated":
        values = rng.integers(0, TOP_POSITION + 1, size=max(1, tokens // 3))
        return [int(v) for v in rng.choice(values, size=tokens)]
    if kind == "random":
        return [int(v) for v in rng.integers(0, TOP_POSITION + 1, size=tokens)]
    raise ValueError(kind)


def _table_rounding_worst(rng: np.random.Generator, tokens: int, skip: int) -> tuple[Any, list[int]]:
    """A float32 (tokens, 1, 2) input whose result a cos/sin table rounded to bfloat16 misses by the most:
    the positions (from ``skip`` on, in order of the largest rounding of cos p and sin p together) and, per
    token, x = m * (sign of cos's rounding, minus sign of sin's), so both roundings add up in y_0, with m
    such that the largest |y| lies just below 2^13 (the tolerance's floor is a multiple of its ulp)."""
    import ml_dtypes

    p = np.arange(TOP_POSITION + 1)
    c = np.cos(p.astype(np.float32).astype(np.float64)).astype(np.float32)
    s = np.sin(p.astype(np.float32).astype(np.float64)).astype(np.float32)
    dc = c.astype(ml_dtypes.bfloat16).astype(np.float64) - c
    ds = s.astype(ml_dtypes.bfloat16).astype(np.float64) - s
    order = np.argsort(-(np.abs(dc) + np.abs(ds)), kind="stable")[skip : skip + tokens]
    chosen = rng.permutation(order)
    a, b = np.sign(dc[chosen]), -np.sign(ds[chosen])
    largest = max(np.abs(a * c[chosen] - b * s[chosen]).max(), np.abs(a * s[chosen] + b * c[chosen]).max())
    m = float(np.float32(0.998 * 2.0**13 / largest))
    return np.stack([a * m, b * m], axis=-1)[:, None, :], [int(v) for v in chosen]


#: Float32 cases where bfloat16 cos/sin tables miss by the most (``_table_rounding_worst``): (name, skip).
TABLE_ROUNDING = [("float32_table_rounding_worst", 0), ("float32_table_rounding_next", 64)]


def build_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases: list[dict[str, Any]] = []
    for label, dtype, shape, variants in SIGNATURES:
        cast = bf16 if dtype == "bfloat16" else f32
        for kind, scale in variants:
            values = rng.uniform(-1.0, 1.0, size=shape) * scale
            if scale == TOP_VALUE:
                values.flat[0] = TOP_VALUE
            args = {"x": cast(values), "positions": _positions(rng, kind, shape[0])}
            name = f"{label}_{kind}"
            cases.append({"name": name, "visibility": "hidden", "dtype": dtype, "args": args})
    for name, skip in TABLE_ROUNDING:
        values, positions = _table_rounding_worst(rng, 64, skip)
        args = {"x": f32(values), "positions": positions}
        cases.append({"name": name, "visibility": "hidden", "dtype": "float32", "args": args})
    return cases


def main() -> None:
    write(OUT, build_cases)


if __name__ == "__main__":
    main()
