"""A Python if on the traced norm (fails under jax.jit)."""
import jax.numpy as jnp


def safe_norm(x):
    n = jnp.sqrt(jnp.sum(x * x, axis=-1))
    if jnp.all(n > 0):
        return n
    return jnp.where(n > 0, n, 0.0)
