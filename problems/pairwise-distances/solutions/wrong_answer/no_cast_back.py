"""Mistake: No cast back

Computes in float32 and forgets to cast back, so bfloat16 inputs get a float32 result.
"""
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    def dist(a, b):
        d = a.astype(jnp.float32) - b.astype(jnp.float32)
        return jnp.sqrt(jnp.sum(d * d))

    return jax.vmap(jax.vmap(dist, in_axes=(None, 0)), in_axes=(0, None))(x, y)
