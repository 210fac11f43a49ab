"""Mistake: Multiplies by the transpose

Each step multiplies by a.T: the result is (a^T)^k, the transpose of a^k, which differs unless a is
symmetric. Multiply by a itself.
"""
import jax
import jax.numpy as jnp


def matrix_power(a, k):
    return jax.lax.fori_loop(0, k, lambda i, p: p @ a.T, jnp.eye(a.shape[0], dtype=a.dtype))
