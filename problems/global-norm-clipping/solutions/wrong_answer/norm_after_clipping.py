"""Mistake: Norm after clipping

Reports the global norm of the clipped gradients instead of the norm before clipping.
"""
import jax
import jax.numpy as jnp


def _norm(tree):
    return jnp.sqrt(sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in jax.tree.leaves(tree)))


def clip_by_global_norm(grads, max_norm):
    scale = jnp.minimum(1.0, max_norm / _norm(grads))
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": _norm(clipped)}
