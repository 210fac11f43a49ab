"""Mistake: Swapped decay

Decay and 1 - decay swapped: the new value gets weight decay, so a decay of 0.9 forgets almost at once.
"""
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.float32(decay)

    def step(m, x):
        m = (1.0 - d) * m + d * x.astype(jnp.float32)
        return m, m

    _, history = jax.lax.scan(step, init.astype(jnp.float32), xs)
    return history.astype(xs.dtype)
