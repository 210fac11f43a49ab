"""Mistake: Squared distances

Returns squared distances (forgot the square root).
"""
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    def dist2(a, b):
        d = a.astype(jnp.float32) - b.astype(jnp.float32)
        return jnp.sum(d * d)

    return jax.vmap(jax.vmap(dist2, in_axes=(None, 0)), in_axes=(0, None))(x, y).astype(x.dtype)
