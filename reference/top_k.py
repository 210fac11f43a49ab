"""Reference for ``problems/top-k-values-indices``: the k largest entries of each row and where they are,
largest first, ties to the lower index (``jax.lax.top_k``)."""

from __future__ import annotations

from typing import Any

import jax


def top_k(x: Any, k: int) -> tuple[Any, Any]:
    """Return ``(values, indices)`` along the last axis: ``values[..., j]`` is the row's j-th largest entry
    and ``indices[..., j]`` (int32) its position; equal entries come in the order of their positions."""
    values, indices = jax.lax.top_k(x, k)
    return values, indices
