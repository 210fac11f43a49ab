import jax
import jax.numpy as jnp


def tanh_stack(ws, x):
    """Runs inside jax.jit: ws and x are traced arrays. The judge differentiates it with jax.vjp."""
    h = x
    for i in range(ws.shape[0]):
        h = jnp.tanh(h @ ws[i])  # every activation h is stored for the backward pass
    return h
