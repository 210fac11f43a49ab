"""Mistake: Zero below a small distance

Returns 0 when the squared distance is below 1e-6 (a guard for the root's gradient at 0), so distances
under 1e-3, which are allowed, come out as 0. Guard only exact zeros:
jnp.where(s > 0, jnp.sqrt(jnp.where(s > 0, s, 1.0)), 0.0).
"""
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    def dist(a, b):
        d = a.astype(jnp.float32) - b.astype(jnp.float32)
        s = jnp.sum(d * d)
        return jnp.where(s < 1e-6, 0.0, jnp.sqrt(jnp.where(s < 1e-6, 1.0, s)))

    return jax.vmap(jax.vmap(dist, in_axes=(None, 0)), in_axes=(0, None))(x, y).astype(x.dtype)
