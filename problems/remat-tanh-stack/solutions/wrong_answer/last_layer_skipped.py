"""Mistake: Last layer skipped

The loop stops one layer early (range(L - 1)): with L layers, the result is h_L, after every layer.
"""
import jax
import jax.numpy as jnp


def tanh_stack(ws, x):
    layer = jax.checkpoint(lambda h, w: jnp.tanh(h @ w))
    h = x
    for i in range(ws.shape[0] - 1):
        h = layer(h, ws[i])
    return h
