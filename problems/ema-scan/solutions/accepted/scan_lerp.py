# The update written as a step towards the new value, m + (1 - decay) * (x - m), in a scan.
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    rate = 1.0 - jnp.float32(decay)

    def step(m, x):
        m = m + rate * (x.astype(jnp.float32) - m)
        return m, m

    _, history = jax.lax.scan(step, init.astype(jnp.float32), xs)
    return history.astype(xs.dtype)
