"""Mistake: Rotates the wrong way

Writes a cos + b sin and -a sin + b cos, a turn by minus the angle. The first half gets
a cos - b sin and the second a sin + b cos.
"""
import jax.numpy as jnp


def rotary_embedding(x, positions):
    d = x.shape[-1]
    half = d // 2
    theta = 10000.0 ** (-2.0 * jnp.arange(half, dtype=jnp.float32) / d)
    angles = positions.astype(jnp.float32)[:, None, None] * theta
    c, s = jnp.cos(angles), jnp.sin(angles)
    a, b = x[..., :half].astype(jnp.float32), x[..., half:].astype(jnp.float32)
    return jnp.concatenate([a * c + b * s, b * c - a * s], axis=-1).astype(x.dtype)
