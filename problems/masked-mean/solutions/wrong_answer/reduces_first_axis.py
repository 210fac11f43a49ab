"""Mistake: Reduces the first axis instead of the last

Sums with axis=0, which for a 1-D x is the same axis, but for a 2-D or 3-D x averages down the columns.
The mean runs along the last axis: axis=-1.
"""
import jax.numpy as jnp


def masked_mean(x, mask):
    total = jnp.sum(jnp.where(mask, x.astype(jnp.float32), 0.0), axis=0)
    count = jnp.sum(mask, axis=0)
    return (total / jnp.maximum(count, 1)).astype(x.dtype)
