"""Mistake: Ignores init

The average starts from zeros instead of init.
"""
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.float32(decay)

    def step(m, x):
        m = d * m + (1.0 - d) * x.astype(jnp.float32)
        return m, m

    _, history = jax.lax.scan(step, jnp.zeros(xs.shape[1:], jnp.float32), xs)
    return history.astype(xs.dtype)
