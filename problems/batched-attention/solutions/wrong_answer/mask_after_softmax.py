"""Mistake: Mask after softmax

Takes the softmax over all keys and only then zeroes the masked weights, so rows no longer sum to 1.
"""
import jax
import jax.numpy as jnp


def attend(q, k, v, mask):
    s = q @ k.T / jnp.sqrt(jnp.float32(q.shape[-1]))
    return (jax.nn.softmax(s, axis=-1) * mask) @ v


def batched_attention(q, k, v, mask):
    if mask.ndim == 2:
        mask = jnp.broadcast_to(mask[:, None, :], (q.shape[0], q.shape[1], mask.shape[1]))
    f = lambda x: x.astype(jnp.float32)  # noqa: E731
    return jax.vmap(attend)(f(q), f(k), f(v), mask).astype(q.dtype)
