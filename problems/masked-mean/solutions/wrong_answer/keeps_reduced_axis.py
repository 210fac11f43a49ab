"""Mistake: Keeps the reduced axis

Returns shape (..., 1) (keepdims=True): the last axis must be reduced away, so a (3, 4) x gives shape (3,)
and a 1-D x a 0-d array.
"""
import jax.numpy as jnp


def masked_mean(x, mask):
    total = jnp.sum(jnp.where(mask, x.astype(jnp.float32), 0.0), axis=-1, keepdims=True)
    count = jnp.sum(mask, axis=-1, keepdims=True)
    return (total / jnp.maximum(count, 1)).astype(x.dtype)
