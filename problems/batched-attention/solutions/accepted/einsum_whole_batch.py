# Correct: one einsum over the whole batch (no vmap), a finite fill for masked scores, fully masked rows zeroed.
import jax.numpy as jnp


def batched_attention(q, k, v, mask):
    if mask.ndim == 2:
        mask = mask[:, None, :]
    q32, k32, v32 = (x.astype(jnp.float32) for x in (q, k, v))
    scores = jnp.einsum("btd,bsd->bts", q32, k32) * (1.0 / jnp.sqrt(jnp.float32(q.shape[-1])))
    scores = jnp.where(mask, scores, jnp.finfo(jnp.float32).min)
    scores = scores - jnp.max(scores, axis=-1, keepdims=True)
    weights = jnp.exp(scores) * mask
    probs = weights / jnp.maximum(jnp.sum(weights, axis=-1, keepdims=True), jnp.finfo(jnp.float32).tiny)
    out = jnp.einsum("bts,bsv->btv", probs, v32)
    return out.astype(q.dtype)
