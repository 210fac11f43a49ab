# Each step as a weighted sum of the pair (previous average, new value): a dot product in a scan.
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    weights = jnp.stack([jnp.float32(decay), 1.0 - jnp.float32(decay)])

    def step(m, x):
        pair = jnp.stack([m, x.astype(jnp.float32)])
        m = jnp.tensordot(weights, pair, axes=1)
        return m, m.astype(xs.dtype)

    _, history = jax.lax.scan(step, init.astype(jnp.float32), xs)
    return history
