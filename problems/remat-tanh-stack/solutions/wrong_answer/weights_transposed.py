"""Mistake: Weights transposed

Each layer multiplies by the transpose of its weights, h @ W.T instead of h @ W: the shapes agree because
W is square, but the values do not. The layer is h_l = tanh(h_{l-1} W_l), rows times the matrix as given.
"""
import jax
import jax.numpy as jnp


def tanh_stack(ws, x):
    layer = jax.checkpoint(lambda h, w: jnp.tanh(h @ w.T))
    h = x
    for i in range(ws.shape[0]):
        h = layer(h, ws[i])
    return h
