# Accepted: per-leaf norms folded with functools.reduce(jnp.hypot, ...); a chain of ops that reuse operands.
import functools

import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    norms = [jnp.linalg.norm(leaf.astype(jnp.float32)) for leaf in jax.tree.leaves(grads)]
    # hypot(a, b) = sqrt(a^2 + b^2) without overflow; folding it gives the norm of all the leaves.
    norm = functools.reduce(jnp.hypot, norms, jnp.float32(0.0))
    scale = max_norm / jnp.maximum(norm, max_norm)
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": norm}
