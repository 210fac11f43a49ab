"""Mistake: Compares squared norm

Decides whether to clip with the sum of squares (sum_sq > max_norm) instead of the norm itself.
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    sum_sq = sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in leaves)
    norm = jnp.sqrt(sum_sq)
    scale = jnp.where(sum_sq > max_norm, max_norm / norm, 1.0)
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": norm}
