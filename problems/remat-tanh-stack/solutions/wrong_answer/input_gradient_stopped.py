"""Mistake: Gradient of x stopped

jax.lax.stop_gradient on the input makes the gradient with respect to x zero: the values are right, and
so is the gradient with respect to ws, but the judge differentiates with respect to both arguments.
"""
import jax
import jax.numpy as jnp


def tanh_stack(ws, x):
    layer = jax.checkpoint(lambda h, w: jnp.tanh(h @ w))
    h = jax.lax.stop_gradient(x)
    for i in range(ws.shape[0]):
        h = layer(h, ws[i])
    return h
