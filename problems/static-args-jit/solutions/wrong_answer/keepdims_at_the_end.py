"""Mistake: Puts the kept axis at the end

With keepdims true, appends a length-1 axis with out[..., None] instead of putting it back where the
reduced axis was: right only when the last axis is reduced. Use keepdims=True or jnp.expand_dims(out, axis).
"""
import jax
import jax.numpy as jnp

REDUCTIONS = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max, "logsumexp": jax.nn.logsumexp}


def reduce_axis(x, axis, mode, keepdims):
    out = REDUCTIONS[mode](x, axis=axis)
    return out[..., None] if keepdims else out
