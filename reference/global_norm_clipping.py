"""Reference for ``problems/global-norm-clipping``: clip a gradient pytree by its global L2 norm."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def clip_by_global_norm(grads: Any, max_norm: Any) -> dict[str, Any]:
    """Scale all leaves of ``grads`` by one factor so that their joint L2 norm is at most ``max_norm``.

    Squares are summed in float32 whatever the leaf dtype; each clipped leaf is cast back to its own dtype.
    A zero norm gives a scale of 1 (no division by zero, no NaN).
    """
    leaves = jax.tree.leaves(grads)
    # Squares are taken of the values scaled by a power of two near the largest one, and the root scaled
    # back: exact scalings, so this is the plain sqrt(sum(g**2)) wherever no square leaves float32's normal
    # range, and still right for tiny values whose squares would underflow (the CPU flushes subnormals).
    largest = jnp.zeros((), jnp.float32)
    for leaf in leaves:
        largest = jnp.maximum(largest, jnp.max(jnp.abs(leaf.astype(jnp.float32)), initial=0.0))
    _, exponent = jnp.frexp(largest)
    sum_sq = jnp.zeros((), jnp.float32)
    for leaf in leaves:
        sum_sq = sum_sq + jnp.sum(jnp.square(jnp.ldexp(leaf.astype(jnp.float32), -exponent)))
    global_norm = jnp.ldexp(jnp.sqrt(sum_sq), exponent)
    # Only divide by the norm where it exceeds max_norm (> 0), so the denominator is never zero.
    safe_norm = jnp.where(global_norm > max_norm, global_norm, 1.0)
    scale = jnp.where(global_norm > max_norm, max_norm / safe_norm, 1.0).astype(jnp.float32)
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": global_norm}
