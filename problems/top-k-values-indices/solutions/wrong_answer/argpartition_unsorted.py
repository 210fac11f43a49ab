"""Mistake: Unsorted top k

jnp.argpartition puts the k largest entries in the last k places but in no particular order: the result
must be sorted, largest first.
"""
import jax.numpy as jnp


def top_k(x, k):
    n = x.shape[-1]
    order = jnp.argpartition(x, n - k, axis=-1)[..., n - k :]
    return jnp.take_along_axis(x, order, axis=-1), order.astype(jnp.int32)
