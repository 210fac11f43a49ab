# Compile error: a syntax error (an unclosed parenthesis), so the module cannot be loaded.
import jax.numpy as jnp


def masked_mean(x, mask):
    total = jnp.sum(jnp.where(mask, x, 0.0), axis=-1
    return total / jnp.maximum(jnp.sum(mask, axis=-1), 1)
