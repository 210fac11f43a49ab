"""Mistake: Mean divides by the first axis's length

Divides by x.shape[0] whatever the axis: right for a vector or when axis 0 is reduced. Divide by
x.shape[axis], the length of the reduced axis.
"""
import jax.numpy as jnp


def reduce_axis(x, axis, mode, keepdims):
    if mode == "sum":
        return jnp.sum(x, axis=axis, keepdims=keepdims)
    if mode == "mean":
        return jnp.sum(x, axis=axis, keepdims=keepdims) / x.shape[0]
    if mode == "max":
        return jnp.max(x, axis=axis, keepdims=keepdims)
    peak = jnp.max(x, axis=axis, keepdims=True)
    out = peak + jnp.log(jnp.sum(jnp.exp(x - peak), axis=axis, keepdims=True))
    return out if keepdims else out.squeeze(axis)
