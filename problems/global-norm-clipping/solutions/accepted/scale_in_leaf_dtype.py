# Accepted: float32 norm, then the scale cast to each leaf's dtype and multiplied there (within tolerance).
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    sums = jax.tree.map(lambda g: jnp.square(g.astype(jnp.float32)).sum(), grads)
    norm = jnp.sqrt(jax.tree.reduce(jnp.add, sums, jnp.zeros((), jnp.float32)))
    scale = jnp.where(norm > max_norm, max_norm / jnp.maximum(norm, 1e-30), 1.0)
    return {
        "clipped": jax.tree.map(lambda g: g * scale.astype(g.dtype), grads),
        "global_norm": norm,
    }
