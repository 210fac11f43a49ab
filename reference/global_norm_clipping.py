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
    sum_sq = jnp.zeros((), jnp.float32)
    for leaf in leaves:
        sum_sq = sum_sq + jnp.sum(jnp.square(leaf.astype(jnp.float32)))
    global_norm = jnp.sqrt(sum_sq)
    # Only divide by the norm where it exceeds max_norm (> 0), so the denominator is never zero.
    safe_norm = jnp.where(global_norm > max_norm, global_norm, 1.0)
    scale = jnp.where(global_norm > max_norm, max_norm / safe_norm, 1.0).astype(jnp.float32)
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": global_norm}
