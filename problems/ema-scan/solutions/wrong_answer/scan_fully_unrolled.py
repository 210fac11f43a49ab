"""Mistake: Scan fully unrolled

Right values, but scan(..., unroll=True) copies the step once per time step and leaves no loop: the rule
rejects it.
"""
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.float32(decay)

    def step(m, x):
        m = d * m + (1.0 - d) * x.astype(jnp.float32)
        return m, m

    _, history = jax.lax.scan(step, init.astype(jnp.float32), xs, unroll=True)
    return history.astype(xs.dtype)
