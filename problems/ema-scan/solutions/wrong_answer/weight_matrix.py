"""Mistake: Weight matrix

The closed form m_t = decay^t init + (1 - decay) sum_s decay^(t-s) x_s as one matrix product: no loop.
"""
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.float32(decay)
    steps = xs.shape[0]
    t = jnp.arange(1, steps + 1, dtype=jnp.float32)
    gap = t[:, None] - t[None, :]
    weights = jnp.where(gap >= 0, (1.0 - d) * d ** jnp.maximum(gap, 0.0), 0.0)
    flat = xs.reshape(steps, -1).astype(jnp.float32)
    start = (d**t)[:, None] * init.reshape(1, -1).astype(jnp.float32)
    return (start + weights @ flat).reshape(xs.shape).astype(xs.dtype)
