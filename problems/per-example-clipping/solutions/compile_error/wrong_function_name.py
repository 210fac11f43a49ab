# Compile error: the function is named per_example_clip, not per_example_clipping.
import jax.numpy as jnp


def per_example_clip(w, x, y, max_norm):
    return jnp.zeros_like(w)
