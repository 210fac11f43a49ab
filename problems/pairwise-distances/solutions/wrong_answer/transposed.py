"""Mistake: Transposed

The outer vmap maps over y, so the result is (m, n), the transpose of what is asked.
"""
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    def dist(a, b):
        d = a.astype(jnp.float32) - b.astype(jnp.float32)
        return jnp.sqrt(jnp.sum(d * d))

    return jax.vmap(jax.vmap(dist, in_axes=(0, None)), in_axes=(None, 0))(x, y).astype(x.dtype)
