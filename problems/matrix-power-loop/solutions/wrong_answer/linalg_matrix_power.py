"""Mistake: jnp.linalg.matrix_power

jnp.linalg.matrix_power squares repeatedly in a Python loop over the bits of k: a few products, unrolled
while tracing, and no loop in the program. This problem asks for the k products in a loop primitive.
"""
import jax.numpy as jnp


def matrix_power(a, k):
    return jnp.linalg.matrix_power(a, k)
