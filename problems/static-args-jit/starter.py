import jax
import jax.numpy as jnp


def reduce_axis(x, axis, mode, keepdims):
    """Reduce x over `axis` with `mode` ('sum', 'mean', 'max' or 'logsumexp'), keeping the axis if keepdims.

    x is traced; axis (an int), mode (a str) and keepdims (a bool) are static Python values.
    """
    # TODO: choose the reduction from `mode`, and honour `keepdims`.
    return jnp.sum(x, axis=axis)
