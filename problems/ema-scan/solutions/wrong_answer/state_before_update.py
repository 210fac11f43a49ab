"""Mistake: State before update

Off by one: each step stores the average before its update, so the result is m_0 .. m_(T-1), not m_1 .. m_T.
"""
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.float32(decay)

    def step(m, x):
        new = d * m + (1.0 - d) * x.astype(jnp.float32)
        return new, m

    _, history = jax.lax.scan(step, init.astype(jnp.float32), xs)
    return history.astype(xs.dtype)
