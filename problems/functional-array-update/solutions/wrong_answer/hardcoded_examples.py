"""Mistake: The examples hard-coded

Returns the examples' expected outputs for inputs of their shapes and something else otherwise: the
examples pass, nothing else does. Compute the update from the inputs.
"""
import jax.numpy as jnp


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    if x.shape == (4,):
        return jnp.array([10.0, 2.75, 3.0, 42.0], x.dtype)
    if x.shape == (3, 2):
        return jnp.array([[1.0, 1.0], [0.0, 7.0], [4.0, 2.0]], x.dtype)
    return x
