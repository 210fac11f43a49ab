# A while_loop with an explicit step counter; each stored average is cast to the dtype of xs as it is written.
import jax
import jax.numpy as jnp
from jax import lax


def ema_scan(xs, init, decay):
    keep = jnp.float32(decay)
    take = 1.0 - keep
    steps = xs.shape[0]

    def cond(state):
        return state[0] < steps

    def body(state):
        t, m, out = state
        x = lax.dynamic_index_in_dim(xs, t, axis=0, keepdims=False).astype(jnp.float32)
        m = keep * m + take * x
        out = lax.dynamic_update_index_in_dim(out, m.astype(xs.dtype), t, axis=0)
        return t + 1, m, out

    state = (jnp.int32(0), init.astype(jnp.float32), jnp.zeros_like(xs))
    _, _, out = lax.while_loop(cond, body, state)
    return out
