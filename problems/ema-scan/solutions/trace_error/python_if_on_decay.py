# A Python `if` on the traced decay (a shortcut for decay == 0) fails under jax.jit.
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    if decay == 0.0:
        return xs
    d = jnp.float32(decay)

    def step(m, x):
        m = d * m + (1.0 - d) * x.astype(jnp.float32)
        return m, m

    _, history = jax.lax.scan(step, init.astype(jnp.float32), xs)
    return history.astype(xs.dtype)
