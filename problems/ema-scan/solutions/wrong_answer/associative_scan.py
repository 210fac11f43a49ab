"""Mistake: Associative scan

A parallel prefix with jax.lax.associative_scan over (a, b) pairs of affine maps: no loop, so the rule rejects
it.
"""
import jax
import jax.numpy as jnp


def ema_scan(xs, init, decay):
    d = jnp.float32(decay)
    x = xs.astype(jnp.float32)
    a = jnp.full_like(x, d)
    b = (1.0 - d) * x

    def combine(first, second):
        a1, b1 = first
        a2, b2 = second
        return a1 * a2, a2 * b1 + b2

    a_acc, b_acc = jax.lax.associative_scan(combine, (a, b), axis=0)
    return (a_acc * init.astype(jnp.float32) + b_acc).astype(xs.dtype)
