"""Mistake: Bfloat16 carry

Carries the average in the dtype of xs: in bfloat16 small updates are rounded away and the average drifts.
"""
import jax


def ema_scan(xs, init, decay):
    def step(m, x):
        m = decay * m + (1.0 - decay) * x
        return m, m

    _, history = jax.lax.scan(step, init, xs)
    return history
