"""Mistake: Reads every negative axis as the last one

Turns any negative axis into x.ndim - 1, as if -1 were the only negative axis. axis = -k means axis
x.ndim - k: jnp reductions take negative axes as they are, or use axis % x.ndim.
"""
import jax
import jax.numpy as jnp

REDUCTIONS = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max, "logsumexp": jax.nn.logsumexp}


def reduce_axis(x, axis, mode, keepdims):
    a = axis if axis >= 0 else x.ndim - 1
    return REDUCTIONS[mode](x, axis=a, keepdims=keepdims)
