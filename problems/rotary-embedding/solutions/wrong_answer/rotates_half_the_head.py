"""Mistake: Rotates only the first half of each head

Applies the rotation to x[..., :D/2] as if the head size were D/2 and passes x[..., D/2:] through. All
D entries take part: entry i is paired with entry i + D/2.
"""
import jax.numpy as jnp


def rotary_embedding(x, positions):
    d = x.shape[-1] // 2
    quarter = d // 2
    theta = 10000.0 ** (-2.0 * jnp.arange(quarter, dtype=jnp.float32) / d)
    angles = positions.astype(jnp.float32)[:, None, None] * theta
    c, s = jnp.cos(angles), jnp.sin(angles)
    xf = x.astype(jnp.float32)
    a, b = xf[..., :quarter], xf[..., quarter : 2 * quarter]
    rest = xf[..., 2 * quarter :]
    return jnp.concatenate([a * c - b * s, a * s + b * c, rest], axis=-1).astype(x.dtype)
