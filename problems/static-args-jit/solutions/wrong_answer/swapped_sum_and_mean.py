"""Mistake: Swaps sum and mean

The table maps "sum" to jnp.mean and "mean" to jnp.sum. Check each mode against a small example
worked by hand.
"""
import jax
import jax.numpy as jnp

REDUCTIONS = {"sum": jnp.mean, "mean": jnp.sum, "max": jnp.max, "logsumexp": jax.nn.logsumexp}


def reduce_axis(x, axis, mode, keepdims):
    return REDUCTIONS[mode](x, axis=axis, keepdims=keepdims)
