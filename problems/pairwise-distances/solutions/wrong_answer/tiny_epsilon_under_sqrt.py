"""Mistake: Tiny epsilon under sqrt

sqrt(sum + 1e-12) to keep gradients finite: identical points come out 1e-6 apart instead of 0. The float32
tolerance's atol (1e-6) hides it, but a bfloat16 case whose points are all the same expects exact zeros.
Take sqrt of the sum itself; for a safe gradient, use jnp.where(s > 0, jnp.sqrt(jnp.where(s > 0, s, 1)), 0).
"""
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    def dist(a, b):
        d = a.astype(jnp.float32) - b.astype(jnp.float32)
        return jnp.sqrt(jnp.sum(d * d) + 1e-12)

    return jax.vmap(jax.vmap(dist, in_axes=(None, 0)), in_axes=(0, None))(x, y).astype(x.dtype)
