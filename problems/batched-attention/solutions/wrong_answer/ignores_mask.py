"""Mistake: Ignores mask

Forgets the mask; every query attends to every key, padding included.
"""
import jax
import jax.numpy as jnp


def attend(q, k, v):
    s = q @ k.T / jnp.sqrt(jnp.float32(q.shape[-1]))
    return jax.nn.softmax(s, axis=-1) @ v


def batched_attention(q, k, v, mask):
    f = lambda x: x.astype(jnp.float32)  # noqa: E731
    return jax.vmap(attend)(f(q), f(k), f(v)).astype(q.dtype)
