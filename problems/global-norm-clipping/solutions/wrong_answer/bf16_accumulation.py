"""Mistake: Bfloat16 accumulation

Squares summed in the leaf dtype (bfloat16 for bf16 cases), only the final norm cast to float32.
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    sq = sum(jnp.sum(leaf**2) for leaf in leaves)
    norm = jnp.sqrt(sq)
    scale = jnp.minimum(1.0, max_norm / norm)
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": norm.astype(jnp.float32)}
