"""Mistake: Per leaf norm

Clips every leaf by its own norm instead of the global norm (global_norm itself is right).
"""
import jax
import jax.numpy as jnp


def _clip_leaf(g, max_norm):
    n = jnp.sqrt(jnp.sum(g.astype(jnp.float32) ** 2))
    return (g.astype(jnp.float32) * jnp.minimum(1.0, max_norm / n)).astype(g.dtype)


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in leaves))
    clipped = jax.tree.map(lambda g: _clip_leaf(g, max_norm), grads)
    return {"clipped": clipped, "global_norm": norm}
