"""Mistake: One count for the whole array

Sums each row but divides by jnp.sum(mask) without an axis, the number of selected entries in the whole
array. Each row is divided by its own count: jnp.sum(mask, axis=-1).
"""
import jax.numpy as jnp


def masked_mean(x, mask):
    total = jnp.sum(jnp.where(mask, x.astype(jnp.float32), 0.0), axis=-1)
    return (total / jnp.maximum(jnp.sum(mask), 1)).astype(x.dtype)
