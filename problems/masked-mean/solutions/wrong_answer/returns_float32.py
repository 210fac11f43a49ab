"""Mistake: Returns float32 for bfloat16 inputs

Sums in float32, as it should, but never casts the result back. The result has the dtype of x: end with
.astype(x.dtype).
"""
import jax.numpy as jnp


def masked_mean(x, mask):
    total = jnp.sum(jnp.where(mask, x.astype(jnp.float32), 0.0), axis=-1)
    return total / jnp.maximum(jnp.sum(mask, axis=-1), 1)
