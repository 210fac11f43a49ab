"""Mistake: Masked scores filled with -1e4

A finite fill is not minus infinity: scores reach tens of thousands, so in a row whose allowed scores are
all below -1e4 the masked keys' -1e4 is the largest score and takes every weight. Fill with -jnp.inf and
handle fully masked rows, or with jnp.finfo(jnp.float32).min.
"""
import jax
import jax.numpy as jnp


def attend(q, k, v, mask):
    s = q @ k.T / jnp.sqrt(jnp.float32(q.shape[-1]))
    out = jax.nn.softmax(jnp.where(mask, s, -1e4), axis=-1) @ v
    return jnp.where(jnp.any(mask, axis=-1, keepdims=True), out, 0.0)


def batched_attention(q, k, v, mask):
    if mask.ndim == 2:
        mask = jnp.broadcast_to(mask[:, None, :], (q.shape[0], q.shape[1], mask.shape[1]))
    f = lambda x: x.astype(jnp.float32)  # noqa: E731
    return jax.vmap(attend)(f(q), f(k), f(v), mask).astype(q.dtype)
