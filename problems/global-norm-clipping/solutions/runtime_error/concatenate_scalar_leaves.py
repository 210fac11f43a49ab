# Runtime error: jnp.concatenate of the raw leaves fails on 0-d leaves (needs jnp.ravel first): ValueError.
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    flat = jnp.concatenate([leaf.astype(jnp.float32) for leaf in jax.tree.leaves(grads)])
    norm = jnp.sqrt(jnp.sum(flat**2))
    scale = jnp.minimum(1.0, max_norm / norm)
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": norm}
