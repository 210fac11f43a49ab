# Compile error: the function is named attention, not batched_attention.
import jax.numpy as jnp


def attention(q, k, v, mask):
    return jnp.zeros((q.shape[0], q.shape[1], v.shape[2]), q.dtype)
