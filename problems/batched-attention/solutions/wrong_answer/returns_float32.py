"""Mistake: Returns float32

Computes correctly in float32 but forgets to cast back, so bfloat16 inputs give a float32 result.
"""
import jax
import jax.numpy as jnp


def attend(q, k, v, mask):
    s = q @ k.T / jnp.sqrt(jnp.float32(q.shape[-1]))
    m = jnp.max(jnp.where(mask, s, -jnp.inf), axis=-1, keepdims=True)
    e = jnp.where(mask, jnp.exp(s - jnp.where(jnp.isfinite(m), m, 0.0)), 0.0)
    z = jnp.sum(e, axis=-1, keepdims=True)
    return (e / jnp.where(z == 0, 1.0, z)) @ v


def batched_attention(q, k, v, mask):
    if mask.ndim == 2:
        mask = jnp.broadcast_to(mask[:, None, :], (q.shape[0], q.shape[1], mask.shape[1]))
    f = lambda x: x.astype(jnp.float32)  # noqa: E731
    return jax.vmap(attend)(f(q), f(k), f(v), mask)
