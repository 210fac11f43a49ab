"""Mistake: One step in the loop, the rest unrolled

A fori_loop does the first product and a Python for loop the other k - 1: the values are right, but the
Python loop is unrolled while jax.jit traces it, so the program still grows with k. Put every product in
the loop body: jax.lax.fori_loop(0, k, lambda i, p: p @ a, eye).
"""
import jax
import jax.numpy as jnp


def matrix_power(a, k):
    eye = jnp.eye(a.shape[0], dtype=a.dtype)
    p = jax.lax.fori_loop(0, min(k, 1), lambda i, p: p @ a, eye)
    for _ in range(k - 1):
        p = p @ a
    return p
