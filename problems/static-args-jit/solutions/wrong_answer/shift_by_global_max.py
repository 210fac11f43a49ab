"""Mistake: Shifts logsumexp by the largest element of the whole array

m = jnp.max(x) is one number for every slice: a slice whose values lie far below the overall maximum
underflows to exp(...) = 0 and its log is -inf. Shift each slice by its own maximum:
jnp.max(x, axis=axis, keepdims=True).
"""
import jax.numpy as jnp


def reduce_axis(x, axis, mode, keepdims):
    if mode == "sum":
        return jnp.sum(x, axis=axis, keepdims=keepdims)
    if mode == "mean":
        return jnp.mean(x, axis=axis, keepdims=keepdims)
    if mode == "max":
        return jnp.max(x, axis=axis, keepdims=keepdims)
    peak = jnp.max(x)
    return peak + jnp.log(jnp.sum(jnp.exp(x - peak), axis=axis, keepdims=keepdims))
