"""Mistake: Bfloat16 scores then upcast

Takes the scores in the input dtype and upcasts only for the softmax; bfloat16 scores are rounded.
"""
import jax
import jax.numpy as jnp


def batched_attention(q, k, v, mask):
    if mask.ndim == 2:
        mask = mask[:, None, :]
    scores = jnp.einsum("btd,bsd->bts", q, k) / jnp.sqrt(jnp.asarray(q.shape[-1], q.dtype))
    probs = jax.nn.softmax(jnp.where(mask, scores.astype(jnp.float32), -1e30), axis=-1)
    probs = probs * jnp.any(mask, axis=-1, keepdims=True)
    return jnp.einsum("bts,bsv->btv", probs, v.astype(jnp.float32)).astype(q.dtype)
