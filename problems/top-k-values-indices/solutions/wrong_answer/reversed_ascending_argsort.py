"""Mistake: Reversed ascending argsort

jnp.argsort(x)[..., ::-1] is descending, but the reversal also reverses the order of equal entries: the
higher position comes first, in indices and where a tie decides the k-th place. Sort -x with
stable=True, or use jax.lax.top_k.
"""
import jax.numpy as jnp


def top_k(x, k):
    order = jnp.argsort(x, axis=-1, stable=True)[..., ::-1][..., :k]
    return jnp.take_along_axis(x, order, axis=-1), order.astype(jnp.int32)
