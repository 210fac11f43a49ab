"""Mistake: Elementwise power

p * a multiplies entry by entry: the result is every entry of a raised to the k-th power, not the matrix
power. Use the matrix product p @ a.
"""
import jax
import jax.numpy as jnp


def matrix_power(a, k):
    return jax.lax.fori_loop(0, k, lambda i, p: p * a, jnp.ones_like(a))
