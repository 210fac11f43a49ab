# Trace error: a Python `if` on the traced norm (TracerBoolConversionError under jax.jit).
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in leaves))
    if norm > max_norm:
        scale = max_norm / norm
    else:
        scale = 1.0
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": norm}
