"""Mistake: Frequency exponent i/D instead of 2i/D

theta_i = 10000 ** (-i / D) makes the frequencies fall half as fast; the exponent is -2i/D, so the last
pair's frequency is near 1/10000.
"""
import jax.numpy as jnp


def rotary_embedding(x, positions):
    d = x.shape[-1]
    half = d // 2
    theta = 10000.0 ** (-jnp.arange(half, dtype=jnp.float32) / d)
    angles = positions.astype(jnp.float32)[:, None, None] * theta
    c, s = jnp.cos(angles), jnp.sin(angles)
    a, b = x[..., :half].astype(jnp.float32), x[..., half:].astype(jnp.float32)
    return jnp.concatenate([a * c - b * s, a * s + b * c], axis=-1).astype(x.dtype)
