"""Mistake: Bfloat16 three percent off

Bfloat16 leaves come back 3% too large (float32 leaves are right): a systematic error that the bfloat16
tolerance must reject although every single element is only a few ulps off.
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in leaves))
    scale = jnp.minimum(1.0, max_norm / norm)

    def clip(g):
        off = 1.03 if g.dtype == jnp.bfloat16 else 1.0
        return (g.astype(jnp.float32) * (scale * off)).astype(g.dtype)

    return {"clipped": jax.tree.map(clip, grads), "global_norm": norm}
