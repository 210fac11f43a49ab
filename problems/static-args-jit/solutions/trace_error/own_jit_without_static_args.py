# Wraps the function in its own jax.jit that declares only axis and mode static: keepdims arrives there as
# a traced bool array, and `if keepdims` cannot be decided while tracing.
import functools

import jax
import jax.numpy as jnp

REDUCTIONS = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max, "logsumexp": jax.nn.logsumexp}


@functools.partial(jax.jit, static_argnames=("axis", "mode"))
def _reduce(x, axis, mode, keepdims):
    out = REDUCTIONS[mode](x, axis=axis)
    return jnp.expand_dims(out, axis) if keepdims else out


def reduce_axis(x, axis, mode, keepdims):
    return _reduce(x, axis, mode, keepdims)
