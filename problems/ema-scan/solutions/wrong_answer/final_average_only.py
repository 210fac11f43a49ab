"""Mistake: Final average only

Returns only the last average m_T (the scan's carry) instead of every step's average.
"""
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.float32(decay)

    def step(m, x):
        return d * m + (1.0 - d) * x.astype(jnp.float32), None

    final, _ = jax.lax.scan(step, init.astype(jnp.float32), xs)
    return final.astype(xs.dtype)
