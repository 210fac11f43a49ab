"""Mistake: logsumexp without the max shift

Computes log(sum(exp(x))) as written: exp overflows to inf for values above 88.7 and underflows to 0
(log 0 = -inf) below -103.9. Subtract each slice's maximum m before exp and add m after the log.
"""
import jax.numpy as jnp


def reduce_axis(x, axis, mode, keepdims):
    if mode == "sum":
        return jnp.sum(x, axis=axis, keepdims=keepdims)
    if mode == "mean":
        return jnp.mean(x, axis=axis, keepdims=keepdims)
    if mode == "max":
        return jnp.max(x, axis=axis, keepdims=keepdims)
    return jnp.log(jnp.sum(jnp.exp(x), axis=axis, keepdims=keepdims))
