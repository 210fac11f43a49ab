"""Mistake: Epsilon under sqrt

sqrt(sum + 1e-6) to keep gradients finite; identical points come out 1e-3 apart, not 0.
"""
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    def dist(a, b):
        d = a.astype(jnp.float32) - b.astype(jnp.float32)
        return jnp.sqrt(jnp.sum(d * d) + 1e-6)

    return jax.vmap(jax.vmap(dist, in_axes=(None, 0)), in_axes=(0, None))(x, y).astype(x.dtype)
