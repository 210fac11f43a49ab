"""Mistake: An empty row falls back to the plain mean

A row with nothing selected gives the mean of all its entries. The mean of no entries is defined as 0
here: jnp.where(count > 0, masked_mean, 0).
"""
import jax.numpy as jnp


def masked_mean(x, mask):
    x32 = x.astype(jnp.float32)
    count = jnp.sum(mask, axis=-1)
    total = jnp.sum(jnp.where(mask, x32, 0.0), axis=-1)
    return jnp.where(count > 0, total / jnp.maximum(count, 1), jnp.mean(x32, axis=-1)).astype(x.dtype)
