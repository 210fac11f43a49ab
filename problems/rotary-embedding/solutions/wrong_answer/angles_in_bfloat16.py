"""Mistake: Angles computed in bfloat16

Casts positions and frequencies to x's dtype before multiplying: bfloat16 keeps 8 significant bits, so
position 4001 becomes 4000 and the angles are off by whole radians. Compute the angles, cos and sin in
float32 and cast only the result.
"""
import jax.numpy as jnp


def rotary_embedding(x, positions):
    d = x.shape[-1]
    half = d // 2
    theta = (10000.0 ** (-2.0 * jnp.arange(half, dtype=jnp.float32) / d)).astype(x.dtype)
    angles = positions.astype(x.dtype)[:, None, None] * theta
    c, s = jnp.cos(angles), jnp.sin(angles)
    a, b = x[..., :half], x[..., half:]
    return jnp.concatenate([a * c - b * s, a * s + b * c], axis=-1)
