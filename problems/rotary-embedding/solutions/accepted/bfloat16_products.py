"""Float32 angles, but cosines and sines cast to x's dtype and the products taken there (the HF habit)."""
import numpy as np
import jax.numpy as jnp


def rotary_embedding(x, positions):
    d = x.shape[-1]
    half = d // 2
    # The frequencies as a float64 NumPy constant, rounded once to float32.
    theta = jnp.asarray(10000.0 ** (-2.0 * np.arange(half) / d), dtype=jnp.float32)
    angles = positions.astype(jnp.float32)[:, None, None] * theta
    c, s = jnp.cos(angles).astype(x.dtype), jnp.sin(angles).astype(x.dtype)
    a, b = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([a * c - b * s, a * s + b * c], axis=-1)
