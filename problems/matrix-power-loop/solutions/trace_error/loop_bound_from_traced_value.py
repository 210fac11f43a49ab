"""Stops when the traced product is small, with a Python while on a traced comparison (fails under jit)."""
import jax.numpy as jnp


def matrix_power(a, k):
    p = jnp.eye(a.shape[0], dtype=a.dtype)
    t = 0
    while t < k and jnp.max(jnp.abs(p)) > 0:
        p = p @ a
        t += 1
    return p
