"""Mistake: Python for loop

A Python for loop over the k steps computes the right values, but jax.jit unrolls it into k matrix
products. Let jax.lax.fori_loop run the one product k times.
"""
import jax.numpy as jnp


def matrix_power(a, k):
    p = jnp.eye(a.shape[0], dtype=a.dtype)
    for _ in range(k):
        p = p @ a
    return p
