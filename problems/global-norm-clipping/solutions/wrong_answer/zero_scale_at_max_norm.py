"""Mistake: Zero scale at max norm

A norm exactly equal to max_norm is "neither under nor over", and the leaves get scale 0.
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in leaves))
    shrink = max_norm / jnp.maximum(norm, 1e-30)
    scale = jnp.where(norm < max_norm, 1.0, jnp.where(norm > max_norm, shrink, 0.0))
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": norm}
