"""Mistake: Barrier in the forward pass

Passing each layer's input through jax.lax.optimization_barrier before computing it changes nothing
about what is stored: the forward pass reads the barrier and jax.grad keeps the activations as usual.
jax.checkpoint leaves the forward pass alone and recomputes the layer in the backward pass.
"""
import jax
import jax.numpy as jnp


def tanh_stack(ws, x):
    h = x
    for i in range(ws.shape[0]):
        h = jnp.tanh(jax.lax.optimization_barrier(h) @ ws[i])
    return h
