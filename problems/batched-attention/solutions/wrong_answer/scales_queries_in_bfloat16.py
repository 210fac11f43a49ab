"""Mistake: Scales the queries by 1/sqrt(d) in bfloat16 before a bfloat16 matmul

q / sqrt(d) kept in the input dtype rounds every query entry to bfloat16's 8 bits (unless sqrt(d) is a
power of two), and the matmul then multiplies those rounded queries, even when it accumulates in float32:
with scores in the tens of thousands each score moves by tens of units, and the softmax weights with it.
Upcast q and k first and scale in float32: q.astype(jnp.float32) / jnp.sqrt(d).
"""
import jax
import jax.numpy as jnp


def batched_attention(q, k, v, mask):
    if mask.ndim == 2:
        mask = mask[:, None, :]
    scaled = q / jnp.sqrt(jnp.asarray(q.shape[-1], q.dtype))
    scores = jnp.einsum("btd,bsd->bts", scaled, k, preferred_element_type=jnp.float32)
    probs = jax.nn.softmax(jnp.where(mask, scores, -1e30), axis=-1)
    probs = probs * jnp.any(mask, axis=-1, keepdims=True)
    return jnp.einsum("bts,bsv->btv", probs, v.astype(jnp.float32)).astype(q.dtype)
