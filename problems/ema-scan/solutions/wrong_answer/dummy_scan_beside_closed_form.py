"""Mistake: Dummy scan beside a closed form

A jax.lax.scan whose body multiplies by decay (the work the rule names) into a carry the result never
uses, while jax.lax.associative_scan beside it computes the averages: the answer does not come out of the
loop. Run the update m = decay * m + (1 - decay) * x in the scan body and stack what it returns.
"""
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.float32(decay)
    x = xs.astype(jnp.float32)
    busy, _ = jax.lax.scan(lambda c, row: (c * d + row, None), jnp.zeros_like(x[0]), x)

    def combine(first, second):
        a1, b1 = first
        a2, b2 = second
        return a1 * a2, a2 * b1 + b2

    a_acc, b_acc = jax.lax.associative_scan(combine, (jnp.full_like(x, d), (1.0 - d) * x), axis=0)
    return (a_acc * init.astype(jnp.float32) + b_acc + 0.0 * busy).astype(xs.dtype)
