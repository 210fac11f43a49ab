"""The rotate_half form: y = x * cos + rotate_half(x) * sin with full-width cos and sin, all in float32."""
import jax.numpy as jnp


def rotate_half(v):
    half = v.shape[-1] // 2
    return jnp.concatenate([-v[..., half:], v[..., :half]], axis=-1)


def rotary_embedding(x, positions):
    d = x.shape[-1]
    inv_freq = 1.0 / (10000.0 ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))
    freqs = jnp.outer(positions.astype(jnp.float32), inv_freq)
    emb = jnp.concatenate([freqs, freqs], axis=-1)[:, None, :]
    xf = x.astype(jnp.float32)
    return (xf * jnp.cos(emb) + rotate_half(xf) * jnp.sin(emb)).astype(x.dtype)
