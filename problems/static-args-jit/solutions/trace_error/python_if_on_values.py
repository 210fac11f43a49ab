# Shifts logsumexp only when the values are large, with a Python `if` on a traced value.
import jax.numpy as jnp


def reduce_axis(x, axis, mode, keepdims):
    if mode == "sum":
        return jnp.sum(x, axis=axis, keepdims=keepdims)
    if mode == "mean":
        return jnp.mean(x, axis=axis, keepdims=keepdims)
    if mode == "max":
        return jnp.max(x, axis=axis, keepdims=keepdims)
    if jnp.max(jnp.abs(x)) > 80.0:
        peak = jnp.max(x, axis=axis, keepdims=True)
        out = peak + jnp.log(jnp.sum(jnp.exp(x - peak), axis=axis, keepdims=True))
        return out if keepdims else out.squeeze(axis)
    return jnp.log(jnp.sum(jnp.exp(x), axis=axis, keepdims=keepdims))
