"""Mistake: Pairs neighbours instead of halves

Rotates (x[2i], x[2i+1]), the original paper's layout. This problem pairs x[i] with x[i + D/2]: take
x[..., :D//2] and x[..., D//2:] as the two members of each pair.
"""
import jax.numpy as jnp


def rotary_embedding(x, positions):
    t, h, d = x.shape
    theta = 10000.0 ** (-2.0 * jnp.arange(d // 2, dtype=jnp.float32) / d)
    angles = positions.astype(jnp.float32)[:, None, None] * theta
    pairs = x.astype(jnp.float32).reshape(t, h, d // 2, 2)
    a, b = pairs[..., 0], pairs[..., 1]
    c, s = jnp.cos(angles), jnp.sin(angles)
    return jnp.stack([a * c - b * s, a * s + b * c], axis=-1).reshape(t, h, d).astype(x.dtype)
