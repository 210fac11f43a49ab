"""Mistake: The k smallest

An ascending argsort keeps the k smallest entries. Sort the negated row, or use jax.lax.top_k.
"""
import jax.numpy as jnp


def top_k(x, k):
    order = jnp.argsort(x, axis=-1, stable=True)[..., :k]
    return jnp.take_along_axis(x, order, axis=-1), order.astype(jnp.int32)
