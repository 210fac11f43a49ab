"""Mistake: Mean divides by every element

Divides the sum over the axis by x.size, the number of all elements, instead of x.shape[axis], the
number of values in each slice. The two agree only for a 1-dimensional x.
"""
import jax.numpy as jnp


def reduce_axis(x, axis, mode, keepdims):
    if mode == "sum":
        return jnp.sum(x, axis=axis, keepdims=keepdims)
    if mode == "mean":
        return jnp.sum(x, axis=axis, keepdims=keepdims) / x.size
    if mode == "max":
        return jnp.max(x, axis=axis, keepdims=keepdims)
    peak = jnp.max(x, axis=axis, keepdims=True)
    out = peak + jnp.log(jnp.sum(jnp.exp(x - peak), axis=axis, keepdims=True))
    return out if keepdims else out.squeeze(axis)
