# Normalises a negative axis with `axis + x.ndim` instead of `axis += x.ndim`: loops forever while tracing.
import jax
import jax.numpy as jnp

REDUCTIONS = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max, "logsumexp": jax.nn.logsumexp}


def reduce_axis(x, axis, mode, keepdims):
    while axis < 0:
        axis + x.ndim
    return REDUCTIONS[mode](x, axis=axis, keepdims=keepdims)
