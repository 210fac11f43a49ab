"""Mistake: Frequencies counted from i = 1

Uses theta = 10000 ** (-2 (i + 1) / D) for i = 0 .. D/2 - 1, so the first pair does not turn at
frequency 1. Start at i = 0: jnp.arange(D // 2).
"""
import jax.numpy as jnp


def rotary_embedding(x, positions):
    d = x.shape[-1]
    half = d // 2
    theta = 10000.0 ** (-2.0 * jnp.arange(1, half + 1, dtype=jnp.float32) / d)
    angles = positions.astype(jnp.float32)[:, None, None] * theta
    c, s = jnp.cos(angles), jnp.sin(angles)
    a, b = x[..., :half].astype(jnp.float32), x[..., half:].astype(jnp.float32)
    return jnp.concatenate([a * c - b * s, a * s + b * c], axis=-1).astype(x.dtype)
