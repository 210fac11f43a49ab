"""Mistake: cos and sin swapped

Writes a sin - b cos and a cos + b sin: that is no rotation by the angle. The first half gets
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
    return jnp.concatenate([a * s - b * c, a * c + b * s], axis=-1).astype(x.dtype)
