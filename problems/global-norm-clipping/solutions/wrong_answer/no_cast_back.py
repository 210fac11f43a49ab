"""Mistake: No cast back

Clipped leaves are left in float32, so bfloat16 gradients come back as float32 leaves.
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in leaves))
    scale = jnp.minimum(1.0, max_norm / norm)
    clipped = jax.tree.map(lambda g: g.astype(jnp.float32) * scale, grads)
    return {"clipped": clipped, "global_norm": norm}
