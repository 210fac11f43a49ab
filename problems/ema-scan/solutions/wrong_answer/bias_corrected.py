"""Mistake: Bias corrected

Adam-style bias correction the statement excludes: each average is divided by 1 - decay^t.
"""
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.float32(decay)

    def step(carry, x):
        m, t = carry
        m = d * m + (1.0 - d) * x.astype(jnp.float32)
        t = t + 1.0
        return (m, t), m / (1.0 - d**t)

    _, history = jax.lax.scan(step, (init.astype(jnp.float32), jnp.float32(0.0)), xs)
    return history.astype(xs.dtype)
