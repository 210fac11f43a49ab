# The table of reductions forgets "logsumexp": a KeyError while tracing the logsumexp cases.
import jax.numpy as jnp

REDUCTIONS = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max}


def reduce_axis(x, axis, mode, keepdims):
    return REDUCTIONS[mode](x, axis=axis, keepdims=keepdims)
