"""Mistake: Cosine and sine tables stored in bfloat16, also for float32 inputs

A table of cos and sin kept in bfloat16 (to save memory) rounds each entry to 8 significant bits, an error of
up to 2^-9 of it: for float32 x that is many float32 roundings of the result. Keep the tables in float32
(or in x's dtype): jnp.cos(angles) with float32 angles.
"""
import jax.numpy as jnp


def rotary_embedding(x, positions):
    d = x.shape[-1]
    half = d // 2
    theta = 10000.0 ** (-2.0 * jnp.arange(half, dtype=jnp.float32) / d)
    angles = positions.astype(jnp.float32)[:, None, None] * theta
    c = jnp.cos(angles).astype(jnp.bfloat16)
    s = jnp.sin(angles).astype(jnp.bfloat16)
    a, b = x[..., :half], x[..., half:]
    y = jnp.concatenate([a * c - b * s, a * s + b * c], axis=-1)
    return y.astype(x.dtype)
