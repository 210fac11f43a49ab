"""Mistake: Cumsum closed form

The closed form with cumsum of xs scaled by decay^-t (unstable, and no loop): the rule rejects it.
"""
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.float32(decay)
    steps = xs.shape[0]
    t = jnp.arange(1, steps + 1, dtype=jnp.float32).reshape((steps,) + (1,) * (xs.ndim - 1))
    scaled = (1.0 - d) * xs.astype(jnp.float32) / d**t
    history = d**t * (init.astype(jnp.float32) + jnp.cumsum(scaled, axis=0))
    return history.astype(xs.dtype)
