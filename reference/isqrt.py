"""Reference for ``problems/integer-sqrt-newton``: integer square roots by Newton's method in one
``jax.lax.while_loop`` over the whole array, with each element's own count of steps."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def isqrt(n: Any) -> tuple[Any, Any]:
    """Return ``(root, steps)``: for each element, start from ``y = n`` and replace ``y`` by
    ``z = (y + n // y) // 2`` while ``z < y``; ``root`` is the last ``y`` (``floor(sqrt(n))``) and ``steps``
    how many replacements were made. ``n`` of 0 and 1 give ``(n, 0)``. Both int32."""
    safe = jnp.maximum(n, 1)

    def cond(state: tuple[jax.Array, jax.Array, jax.Array]) -> jax.Array:
        return jnp.any(state[2])

    def body(state: tuple[jax.Array, jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array, jax.Array]:
        y, steps, active = state
        z = (y + safe // y) // 2
        better = active & (z < y)
        return jnp.where(better, z, y), steps + better.astype(jnp.int32), better

    start = (safe, jnp.zeros_like(n), n > 1)
    root, steps, _ = jax.lax.while_loop(cond, body, start)
    return jnp.where(n > 1, root, n), steps
