# A fori_loop over the steps that writes each average into a preallocated float32 buffer.
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.asarray(decay, jnp.float32)
    steps = xs.shape[0]

    def body(t, carry):
        m, out = carry
        m = d * m + (1.0 - d) * xs[t].astype(jnp.float32)
        return m, out.at[t].set(m)

    out = jnp.zeros(xs.shape, jnp.float32)
    _, out = jax.lax.fori_loop(0, steps, body, (init.astype(jnp.float32), out))
    return out.astype(xs.dtype)
