"""Reference for ``problems/matrix-power-loop``: the k-th power of a square matrix, one product per step
of a ``jax.lax.fori_loop``."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def matrix_power(a: Any, k: int) -> Any:
    """Return ``a`` multiplied by itself ``k`` times: ``P_0 = I`` and ``P_t = P_{t-1} @ a``; ``k`` is a
    static int, ``k = 0`` gives the identity in ``a``'s dtype."""
    eye = jnp.eye(a.shape[0], dtype=a.dtype)
    return jax.lax.fori_loop(0, k, lambda _, p: p @ a, eye)


def matrix_power_magnitude(a: Any, k: int) -> Any:
    """Per output element, the magnitude of the terms that make it (``[compare] magnitude``): an entry of
    ``a^k`` is a sum of products of ``k`` entries of ``a`` along paths, so ``|a|^k`` is the sum of those
    products' absolute values, which bounds what any order of the products and their sums rounds."""
    m = jnp.abs(a).astype(jnp.float32)
    eye = jnp.eye(a.shape[0], dtype=jnp.float32)
    return jax.lax.fori_loop(0, k, lambda _, p: p @ m, eye)
