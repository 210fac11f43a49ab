"""Mistake: One step short

fori_loop(1, k, ...) from the identity runs k - 1 steps, not k: the result is a^(k-1) (the identity for
k = 1). fori_loop(lower, upper, ...) runs upper - lower times: use fori_loop(0, k, ...).
"""
import jax
import jax.numpy as jnp


def matrix_power(a, k):
    return jax.lax.fori_loop(1, k, lambda i, p: p @ a, jnp.eye(a.shape[0], dtype=a.dtype))
