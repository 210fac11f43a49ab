"""Mistake: True read as "masked out"

Averages the entries whose mask is False, as numpy.ma does (there True marks an invalid entry). Here True
means "include this entry".
"""
import jax.numpy as jnp


def masked_mean(x, mask):
    keep = ~mask
    total = jnp.sum(jnp.where(keep, x.astype(jnp.float32), 0.0), axis=-1)
    count = jnp.sum(keep, axis=-1)
    return (total / jnp.maximum(count, 1)).astype(x.dtype)
