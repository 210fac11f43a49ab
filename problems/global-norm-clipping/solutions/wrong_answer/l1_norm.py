"""Mistake: L1 norm

Uses the L1 norm (sum of absolute values) instead of the L2 norm.
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    norm = sum(jnp.sum(jnp.abs(leaf.astype(jnp.float32))) for leaf in leaves)
    scale = jnp.minimum(1.0, max_norm / norm)
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": jnp.asarray(norm, jnp.float32)}
