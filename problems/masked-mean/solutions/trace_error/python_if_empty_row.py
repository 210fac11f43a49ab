# Trace error: a Python `if` on the count, a traced value with no concrete truth value under jax.jit.
import jax.numpy as jnp


def masked_mean(x, mask):
    count = jnp.sum(mask, axis=-1)
    total = jnp.sum(jnp.where(mask, x.astype(jnp.float32), 0.0), axis=-1)
    if jnp.any(count == 0):
        count = jnp.maximum(count, 1)
    return (total / count).astype(x.dtype)
