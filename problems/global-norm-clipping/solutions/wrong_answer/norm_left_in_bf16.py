"""Mistake: Norm left in bfloat16

No float32 anywhere, so for bfloat16 grads global_norm comes back as bfloat16 (dtype mismatch).
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(leaf * leaf) for leaf in leaves))
    scale = jnp.minimum(1.0, max_norm / norm)
    return {"clipped": jax.tree.map(lambda g: g * scale, grads), "global_norm": norm}
