"""Moves the reduced axis to the end, reduces the last axis, and puts a length-1 axis back if asked."""
import jax.numpy as jnp


def reduce_axis(x, axis, mode, keepdims):
    moved = jnp.moveaxis(x, axis, -1)
    n = moved.shape[-1]
    if mode == "sum":
        out = moved.sum(axis=-1)
    elif mode == "mean":
        out = moved.sum(axis=-1) * (1.0 / n)
    elif mode == "max":
        out = moved.max(axis=-1)
    else:
        peak = moved.max(axis=-1)
        out = peak + jnp.log(jnp.exp(moved - peak[..., None]).sum(axis=-1))
    return jnp.expand_dims(out, axis) if keepdims else out
