"""A Python while on a traced comparison (fails under jax.jit: a traced bool has no Python value)."""
import jax.numpy as jnp


def isqrt(n):
    y = jnp.maximum(n, 1)
    steps = jnp.zeros_like(n)
    z = (y + n // y) // 2
    while jnp.any(z < y):
        steps = steps + (z < y)
        y = jnp.minimum(y, z)
        z = (y + n // y) // 2
    return y, steps
