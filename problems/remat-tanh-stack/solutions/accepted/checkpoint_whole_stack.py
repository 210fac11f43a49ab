"""One jax.checkpoint around the whole stack: the backward pass recomputes every layer from x and ws."""
import jax
import jax.numpy as jnp


def _stack(ws, x):
    h = x
    for i in range(ws.shape[0]):
        h = jnp.tanh(h @ ws[i])
    return h


def tanh_stack(ws, x):
    return jax.checkpoint(_stack)(ws, x)
