"""Mistake: Starts from a

The product starts from a instead of the identity and still multiplies k times, which gives a^(k+1)
(and a, not I, for k = 0). Start from jnp.eye(n, dtype=a.dtype).
"""
import jax


def matrix_power(a, k):
    return jax.lax.fori_loop(0, k, lambda i, p: p @ a, a)
