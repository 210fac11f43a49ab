# Builds the angles token by token with int() of each traced position.
import jax.numpy as jnp


def rotary_embedding(x, positions):
    d = x.shape[-1]
    half = d // 2
    theta = 10000.0 ** (-2.0 * jnp.arange(half, dtype=jnp.float32) / d)
    rows = []
    for t in range(x.shape[0]):
        p = int(positions[t])
        angle = p * theta
        a, b = x[t, :, :half].astype(jnp.float32), x[t, :, half:].astype(jnp.float32)
        rows.append(jnp.concatenate([a * jnp.cos(angle) - b * jnp.sin(angle), a * jnp.sin(angle) + b * jnp.cos(angle)], -1))
    return jnp.stack(rows).astype(x.dtype)
