"""A Python if on a traced value: stop early when the activations are small (fails under jax.jit)."""
import jax
import jax.numpy as jnp


def tanh_stack(ws, x):
    layer = jax.checkpoint(lambda h, w: jnp.tanh(h @ w))
    h = x
    for i in range(ws.shape[0]):
        h = layer(h, ws[i])
        if jnp.max(jnp.abs(h)) < 1e-6:
            break
    return h
