"""Mistake: Manhattan

The L1 (Manhattan) distance, sum of absolute differences.
"""
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    def dist(a, b):
        return jnp.sum(jnp.abs(a.astype(jnp.float32) - b.astype(jnp.float32)))

    return jax.vmap(jax.vmap(dist, in_axes=(None, 0)), in_axes=(0, None))(x, y).astype(x.dtype)
