"""Mistake: Divides by the row length

Zeroes the unselected entries and then takes jnp.mean, which divides by the row length n rather than by
the number of selected entries. Divide the masked sum by the masked count, jnp.sum(mask, axis=-1).
"""
import jax.numpy as jnp


def masked_mean(x, mask):
    return jnp.mean(jnp.where(mask, x.astype(jnp.float32), 0.0), axis=-1).astype(x.dtype)
