# A missing closing bracket: the file does not parse.
import jax.numpy as jnp


def rotary_embedding(x, positions):
    half = x.shape[-1] // 2
    theta = 10000.0 ** (-2.0 * jnp.arange(half) / x.shape[-1]
    angles = positions[:, None, None] * theta
    a, b = x[..., :half], x[..., half:]
    return jnp.concatenate([a * jnp.cos(angles) - b * jnp.sin(angles), a * jnp.sin(angles) + b * jnp.cos(angles)], -1)
