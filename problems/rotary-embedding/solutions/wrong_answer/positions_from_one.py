"""Mistake: Positions counted from 1

Turns token t by (positions[t] + 1) * theta, as if the first position were 1. Use the positions as given:
position 0 leaves the vector unchanged.
"""
import jax.numpy as jnp


def rotary_embedding(x, positions):
    d = x.shape[-1]
    half = d // 2
    theta = 10000.0 ** (-2.0 * jnp.arange(half, dtype=jnp.float32) / d)
    angles = (positions.astype(jnp.float32) + 1.0)[:, None, None] * theta
    c, s = jnp.cos(angles), jnp.sin(angles)
    a, b = x[..., :half].astype(jnp.float32), x[..., half:].astype(jnp.float32)
    return jnp.concatenate([a * c - b * s, a * s + b * c], axis=-1).astype(x.dtype)
