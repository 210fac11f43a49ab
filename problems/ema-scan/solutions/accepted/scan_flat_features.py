# Flattens each step to a vector, scans over time with the index as scanned input, then restores the shape.
import math

import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    steps = xs.shape[0]
    flat = xs.reshape(steps, math.prod(xs.shape[1:])).astype(jnp.float32)
    start = init.reshape(math.prod(init.shape)).astype(jnp.float32)
    beta = jnp.float32(decay)

    def step(m, t):
        new = beta * m + (1 - beta) * flat[t]
        return new, new

    _, history = jax.lax.scan(step, start, jnp.arange(steps))
    return history.reshape(xs.shape).astype(xs.dtype)
