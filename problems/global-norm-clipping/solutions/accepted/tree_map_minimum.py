# Accepted: the hints' approach: tree.leaves, float32 squares, jnp.minimum scale, tree.map and cast back.
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in leaves))
    # A zero norm gives max_norm / 0 = inf and min(1, inf) = 1: no NaN.
    scale = jnp.minimum(1.0, max_norm / norm)
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": norm.astype(jnp.float32)}
