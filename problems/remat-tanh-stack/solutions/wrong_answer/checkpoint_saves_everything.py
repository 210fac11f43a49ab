"""Mistake: Checkpoint that saves everything

jax.checkpoint with the everything_saveable policy stores every intermediate value, exactly as without a
checkpoint, so the backward pass recomputes nothing. Use the default policy (save only the inputs), or
one that saves the matrix products and recomputes the tanh (checkpoint_dots).
"""
import jax
import jax.numpy as jnp


def tanh_stack(ws, x):
    layer = jax.checkpoint(
        lambda h, w: jnp.tanh(h @ w), policy=jax.checkpoint_policies.everything_saveable
    )
    h = x
    for i in range(ws.shape[0]):
        h = layer(h, ws[i])
    return h
