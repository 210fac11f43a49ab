"""Mistake: Mask inverted

Reads True as "masked out" (the convention of some libraries), so it attends exactly where it may not.
"""
import jax
import jax.numpy as jnp


def attend(q, k, v, mask):
    s = q @ k.T / jnp.sqrt(jnp.float32(q.shape[-1]))
    s = jnp.where(mask, -1e30, s)
    p = jnp.exp(s - jnp.max(s, axis=-1, keepdims=True)) * ~mask
    z = jnp.sum(p, axis=-1, keepdims=True)
    return (p / jnp.where(z == 0, 1.0, z)) @ v


def batched_attention(q, k, v, mask):
    if mask.ndim == 2:
        mask = jnp.broadcast_to(mask[:, None, :], (q.shape[0], q.shape[1], mask.shape[1]))
    f = lambda x: x.astype(jnp.float32)  # noqa: E731
    return jax.vmap(attend)(f(q), f(k), f(v), mask).astype(q.dtype)
