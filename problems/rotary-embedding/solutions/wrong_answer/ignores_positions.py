"""Mistake: Assumes positions 0 to T - 1

Uses jnp.arange(T) instead of positions: right for a prompt that starts at 0, wrong for a decoding step
or any other positions. Use the positions argument.
"""
import jax.numpy as jnp


def rotary_embedding(x, positions):
    t, _, d = x.shape
    half = d // 2
    theta = 10000.0 ** (-2.0 * jnp.arange(half, dtype=jnp.float32) / d)
    angles = jnp.arange(t, dtype=jnp.float32)[:, None, None] * theta
    c, s = jnp.cos(angles), jnp.sin(angles)
    a, b = x[..., :half].astype(jnp.float32), x[..., half:].astype(jnp.float32)
    return jnp.concatenate([a * c - b * s, a * s + b * c], axis=-1).astype(x.dtype)
