# Correct: scales the queries by 1/sqrt(d) before one batched einsum; jax.nn.softmax with a -1e30 fill, then
# fully masked rows multiplied by 0.
import jax
import jax.numpy as jnp


def batched_attention(q, k, v, mask):
    if mask.ndim == 2:
        mask = mask[:, None, :]
    q32, k32, v32 = (x.astype(jnp.float32) for x in (q, k, v))
    scores = jnp.einsum("btd,bsd->bts", q32 / jnp.sqrt(jnp.float32(q.shape[-1])), k32)
    probs = jax.nn.softmax(jnp.where(mask, scores, -1e30), axis=-1)
    probs = probs * jnp.any(mask, axis=-1, keepdims=True)
    return jnp.einsum("bts,bsv->btv", probs, v32).astype(q.dtype)
