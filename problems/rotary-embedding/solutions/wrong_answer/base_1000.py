"""Mistake: Base 1000 instead of 10000

theta_i = 1000 ** (-2i / D) makes every frequency but the first too high. The base is 10000.
"""
import jax.numpy as jnp


def rotary_embedding(x, positions):
    d = x.shape[-1]
    half = d // 2
    theta = 1000.0 ** (-2.0 * jnp.arange(half, dtype=jnp.float32) / d)
    angles = positions.astype(jnp.float32)[:, None, None] * theta
    c, s = jnp.cos(angles), jnp.sin(angles)
    a, b = x[..., :half].astype(jnp.float32), x[..., half:].astype(jnp.float32)
    return jnp.concatenate([a * c - b * s, a * s + b * c], axis=-1).astype(x.dtype)
