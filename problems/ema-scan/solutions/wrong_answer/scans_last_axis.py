"""Mistake: Scans last axis

Takes the last axis for time (moveaxis to the front, scan, move back): right only for 1-D xs.
"""
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.float32(decay)

    def step(m, x):
        m = d * m + (1.0 - d) * x.astype(jnp.float32)
        return m, m

    _, history = jax.lax.scan(step, init.astype(jnp.float32), jnp.moveaxis(xs, -1, 0))
    return jnp.moveaxis(history, 0, -1).astype(xs.dtype)
