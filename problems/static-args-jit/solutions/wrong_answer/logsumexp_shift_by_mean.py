"""Mistake: Shifts logsumexp by each slice's mean, not its maximum

The mean keeps every x_k - mean small only while a slice's values lie close together: in a slice holding
1e4 and -1e4 the mean is 0 and exp(1e4) overflows to inf. Shift by the slice's own maximum
(jnp.max(x, axis=axis, keepdims=True)), so the largest term is exp(0) = 1 and none overflows.
"""
import jax.numpy as jnp


def reduce_axis(x, axis, mode, keepdims):
    if mode == "sum":
        return jnp.sum(x, axis=axis, keepdims=keepdims)
    if mode == "mean":
        return jnp.mean(x, axis=axis, keepdims=keepdims)
    if mode == "max":
        return jnp.max(x, axis=axis, keepdims=keepdims)
    center = jnp.mean(x, axis=axis, keepdims=True)
    out = center + jnp.log(jnp.sum(jnp.exp(x - center), axis=axis, keepdims=True))
    return out if keepdims else jnp.squeeze(out, axis=axis)
