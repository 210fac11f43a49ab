"""Mistake: Barrier beside the stored activation

An optimization_barrier is not rematerialisation: here each activation still comes from the forward
pass and is stored, and the barrier only passes a copy along that nothing recomputes from. Use
jax.checkpoint, which places the barrier on the saved inputs and computes the layer again from them.
"""
import jax
import jax.numpy as jnp


def tanh_stack(ws, x):
    h = x
    for i in range(ws.shape[0]):
        h = jnp.tanh(h @ ws[i])
        jax.lax.optimization_barrier(h)
    return h
