"""Mistake: Python loop

Right values, but a Python for loop over time: unrolled while tracing, so the loop rule rejects it.
"""
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.float32(decay)
    m = init.astype(jnp.float32)
    history = []
    for t in range(xs.shape[0]):
        m = d * m + (1.0 - d) * xs[t].astype(jnp.float32)
        history.append(m)
    return jnp.stack(history).astype(xs.dtype)
