"""Mistake: Float32 result

Right values, but the float32 averages are returned as they are: a bfloat16 xs needs a bfloat16 result.
"""
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.float32(decay)

    def step(m, x):
        m = d * m + (1.0 - d) * x.astype(jnp.float32)
        return m, m

    _, history = jax.lax.scan(step, init.astype(jnp.float32), xs)
    return history
