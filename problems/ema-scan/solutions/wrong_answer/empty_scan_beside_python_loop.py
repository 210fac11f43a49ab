"""Mistake: Empty scan beside Python loop

A scan that only counts the steps, beside the real work in an unrolled Python loop; the rule sees it.
"""
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.float32(decay)
    steps, _ = jax.lax.scan(lambda c, _: (c + 1, None), jnp.int32(0), xs)
    m = init.astype(jnp.float32)
    history = []
    for t in range(xs.shape[0]):
        m = d * m + (1.0 - d) * xs[t].astype(jnp.float32)
        history.append(m)
    return jnp.stack(history).astype(xs.dtype) + 0 * steps.astype(xs.dtype)
