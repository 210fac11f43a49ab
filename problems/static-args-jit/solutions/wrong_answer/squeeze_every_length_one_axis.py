"""Mistake: Drops the reduced axis with jnp.squeeze and no axis

jnp.squeeze(out) removes every axis of length 1, not only the reduced one: for x of shape (5, 1, 8)
reduced over its last axis the result must have shape (5, 1), and it gets (5,). Name the axis:
jnp.squeeze(out, axis=axis), or pass keepdims=keepdims to the reduction.
"""
import jax
import jax.numpy as jnp

REDUCTIONS = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max, "logsumexp": jax.nn.logsumexp}


def reduce_axis(x, axis, mode, keepdims):
    out = REDUCTIONS[mode](x, axis=axis, keepdims=True)
    return out if keepdims else jnp.squeeze(out)
