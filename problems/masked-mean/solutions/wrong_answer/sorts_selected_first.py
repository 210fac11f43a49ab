"""Mistake: Sorts the selected entries to the front

jnp.argsort(~mask) moves the selected entries first and the first count of them are averaged: the values
are right, but sorting and gathering to compact the selection is boolean indexing in substance, which this
problem refuses. A masked sum, jnp.sum(jnp.where(mask, x, 0), axis=-1), needs no reordering.
"""
import jax.numpy as jnp


def masked_mean(x, mask):
    order = jnp.argsort(~mask, axis=-1, stable=True)
    packed = jnp.take_along_axis(x.astype(jnp.float32), order, axis=-1)
    count = jnp.sum(mask, axis=-1, keepdims=True)
    first = jnp.arange(x.shape[-1]) < count
    total = jnp.sum(jnp.where(first, packed, 0.0), axis=-1)
    return (total / jnp.maximum(count[..., 0], 1)).astype(x.dtype)
