"""Mistake: Float32 square root

The steps are counted by the integer loop, but the root comes from jnp.sqrt on float32: above 2^24 a
float32 does not hold every integer, so k^2 - 1 rounds to k^2 and its root comes out k instead of
k - 1. Return the loop's integer y.
"""
import jax
import jax.numpy as jnp


def isqrt(n):
    safe = jnp.maximum(n, 1)

    def body(state):
        y, steps, active = state
        z = (y + safe // y) // 2
        better = active & (z < y)
        return jnp.where(better, z, y), steps + better.astype(jnp.int32), better

    _, steps, _ = jax.lax.while_loop(lambda s: jnp.any(s[2]), body, (safe, jnp.zeros_like(n), n > 1))
    root = jnp.floor(jnp.sqrt(n.astype(jnp.float32))).astype(jnp.int32)
    return root, steps
