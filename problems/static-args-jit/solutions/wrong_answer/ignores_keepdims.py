"""Mistake: Ignores keepdims

Always drops the reduced axis. With keepdims true the axis must stay, with length 1: pass
keepdims=keepdims to the reduction (or jnp.expand_dims(out, axis) afterwards).
"""
import jax
import jax.numpy as jnp

REDUCTIONS = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max, "logsumexp": jax.nn.logsumexp}


def reduce_axis(x, axis, mode, keepdims):
    return REDUCTIONS[mode](x, axis=axis)
