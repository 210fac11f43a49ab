"""Helpers for problems' seeded case generators (``problems/<slug>/generate_cases.py``).

Generators write Run-panel JSON whose numbers are exact in the case dtype, so converting the JSON back
gives the judge exactly the inputs the generator meant, and rerunning a generator gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np


def f32(values: Any) -> Any:
    """Nested lists (or a float) holding exact float32 values."""
    return np.asarray(values, dtype=np.float32).tolist()


def bf16(values: Any) -> Any:
    """Nested lists (or a float) holding exact bfloat16 values (round to nearest even)."""
    return np.asarray(values, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float32).tolist()


def num(x: float) -> float:
    """A Python float that is exactly a float32 value."""
    return float(np.float32(x))


def map_shapes(shapes: Any, leaf: Callable[[tuple[int, ...]], Any]) -> Any:
    """A tree of shapes (tuples are shapes; dicts and lists are nodes) with each shape replaced by
    ``leaf(shape)``, called in the tree's order (so a generator's random draws are deterministic)."""
    if isinstance(shapes, dict):
        return {k: map_shapes(v, leaf) for k, v in shapes.items()}
    if isinstance(shapes, list):
        return [map_shapes(v, leaf) for v in shapes]
    return leaf(shapes)


def random_tree(rng: np.random.Generator, shapes: Any, scale: float, cast: Callable[[Any], Any]) -> Any:
    """Fill a tree of shapes with scaled normal values."""
    return map_shapes(shapes, lambda shape: cast(rng.normal(size=shape) * scale))


def key_from_seed(seed: int) -> dict[str, int]:
    """A ``key`` argument's Run-panel JSON for ``jax.random.key(seed)`` (-2**31 <= seed < 2**32; a negative
    seed is the key of seed + 2**32, as ``jax.random.key`` reads it)."""
    if not -(2**31) <= seed < 2**32:
        raise ValueError(f"a key seed is -2**31 to 2**32 - 1, got {seed}")
    return {"key": int(seed)}


def random_key_data(rng: np.random.Generator, shape: tuple[int, ...] = (), words: int = 2) -> dict[str, Any]:
    """A ``key`` argument's Run-panel JSON holding random raw key data (``{"key_data": [...]}``): uint32
    words of shape ``(*shape, words)``, the whole range of each word."""
    data = rng.integers(0, 2**32, size=(*shape, words), dtype=np.uint64)
    return {"key_data": data.astype(np.uint32).tolist()}


def render(cases: list[dict[str, Any]]) -> str:
    """A case file's text: one case per line, so diffs stay readable."""
    body = ",\n".join(json.dumps(case, allow_nan=False) for case in cases)
    return '{"cases": [\n' + body + "\n]}\n"


def write(out: Path, build_cases: Callable[[], list[dict[str, Any]]]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(build_cases()), encoding="utf-8")
    print(f"wrote {out}")
