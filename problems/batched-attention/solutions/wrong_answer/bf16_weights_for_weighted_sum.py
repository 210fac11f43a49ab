"""Mistake: Bfloat16 weights for weighted sum

A float32 softmax, but the weights are rounded to bfloat16 for the weighted sum (which stays float32).
"""
import jax.numpy as jnp


def batched_attention(q, k, v, mask):
    q32, k32 = (a.astype(jnp.float32) for a in (q, k))
    if mask.ndim == 2:
        mask = jnp.broadcast_to(mask[:, None, :], (q.shape[0], q.shape[1], k.shape[1]))
    s = jnp.einsum("btd,bsd->bts", q32, k32) / jnp.sqrt(jnp.float32(q.shape[-1]))
    s = jnp.where(mask, s, -jnp.inf)
    m = jnp.max(s, axis=-1, keepdims=True)
    m = jnp.where(jnp.isfinite(m), m, 0.0)
    e = jnp.where(mask, jnp.exp(s - m), 0.0)
    den = jnp.sum(e, axis=-1, keepdims=True)
    p = jnp.where(den > 0, e / jnp.where(den > 0, den, 1.0), 0.0)
    # flash-attention style: weights in the value dtype for the second matmul
    return jnp.einsum("bts,bsv->btv", p.astype(v.dtype), v, preferred_element_type=jnp.float32).astype(q.dtype)
