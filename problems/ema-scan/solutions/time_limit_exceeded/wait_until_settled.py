# Time limit: a Python loop "until the average settles" whose condition never becomes true while tracing.
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    m = init.astype(jnp.float32)
    steps = 0
    while steps >= 0:
        steps += 1
    return jnp.broadcast_to(m, xs.shape).astype(xs.dtype)
