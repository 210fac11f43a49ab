"""Mistake: NaN on a row with nothing selected

jnp.mean(x, where=mask) divides 0 by a count of 0 on a row with no True value, which is NaN. Such a row
must give 0: divide by jnp.maximum(count, 1), or replace it with jnp.where(count > 0, mean, 0).
"""
import jax.numpy as jnp


def masked_mean(x, mask):
    return jnp.mean(x.astype(jnp.float32), axis=-1, where=mask).astype(x.dtype)
