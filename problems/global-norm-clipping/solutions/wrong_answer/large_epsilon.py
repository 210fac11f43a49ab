"""Mistake: Large epsilon

Divides by norm + 1e-3 as a "safety epsilon", so every clipped leaf lands visibly under max_norm.
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in leaves))
    scale = jnp.minimum(1.0, max_norm / (norm + 1e-3))
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": norm}
