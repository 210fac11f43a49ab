# Accepted: jnp.linalg.norm of all leaves raveled and concatenated in float32; scale = c / max(norm, c).
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    flat = jnp.concatenate([jnp.ravel(leaf).astype(jnp.float32) for leaf in jax.tree.leaves(grads)])
    norm = jnp.linalg.norm(flat)
    # Equal to 1 whenever norm <= max_norm (max_norm > 0, so never a division by zero).
    scale = max_norm / jnp.maximum(norm, max_norm)
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": norm}
