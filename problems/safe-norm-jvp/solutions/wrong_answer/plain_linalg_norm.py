"""Mistake: Plain norm

jnp.linalg.norm gives NaN gradients for a slice of zeros (0 times infinity in the derivative of the
square root), and its sum of squares overflows for values near 1e30. Give the norm a custom JVP that is 0
at the origin, and scale each slice by its largest magnitude before squaring.
"""
import jax.numpy as jnp


def safe_norm(x):
    return jnp.linalg.norm(x, axis=-1)
