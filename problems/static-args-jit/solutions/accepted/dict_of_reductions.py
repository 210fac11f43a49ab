"""A dict from mode to a jnp reduction; jax.nn.logsumexp takes axis and keepdims like the others."""
import jax
import jax.numpy as jnp

REDUCTIONS = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max, "logsumexp": jax.nn.logsumexp}


def reduce_axis(x, axis, mode, keepdims):
    return REDUCTIONS[mode](x, axis=axis, keepdims=keepdims)
