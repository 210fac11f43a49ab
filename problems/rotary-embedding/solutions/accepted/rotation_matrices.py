"""A 2x2 rotation matrix per (token, pair), applied to the stacked pairs with jnp.einsum."""
import jax.numpy as jnp


def rotary_embedding(x, positions):
    t, h, d = x.shape
    i = jnp.arange(d // 2, dtype=jnp.float32)
    angles = positions.astype(jnp.float32)[:, None] * jnp.power(10000.0, -2.0 * i / d)
    c, s = jnp.cos(angles), jnp.sin(angles)
    rot = jnp.stack([jnp.stack([c, -s], -1), jnp.stack([s, c], -1)], -2)  # (T, D/2, 2, 2)
    pairs = x.astype(jnp.float32).reshape(t, h, 2, d // 2)  # [..., 0, i] = x_i, [..., 1, i] = x_{i+D/2}
    out = jnp.einsum("tiab,thbi->thai", rot, pairs)
    return out.reshape(t, h, d).astype(x.dtype)
