"""A jax.lax.scan of length k that multiplies on the left, a @ p (powers of a commute)."""
import jax
import jax.numpy as jnp


def matrix_power(a, k):
    eye = jnp.eye(a.shape[0], dtype=a.dtype)
    p, _ = jax.lax.scan(lambda p, _: (a @ p, None), eye, None, length=k)
    return p
