# Runtime error: broadcasts the (B, S) key-padding mask along the wrong axis, as (B, S, 1) over (B, T, S).
import jax
import jax.numpy as jnp


def batched_attention(q, k, v, mask):
    if mask.ndim == 2:
        mask = jnp.broadcast_to(mask[:, :, None], (q.shape[0], q.shape[1], k.shape[1]))
    q32, k32, v32 = (x.astype(jnp.float32) for x in (q, k, v))
    s = jnp.einsum("btd,bsd->bts", q32, k32) / jnp.sqrt(jnp.float32(q.shape[-1]))
    p = jax.nn.softmax(jnp.where(mask, s, -1e30), axis=-1) * jnp.any(mask, axis=-1, keepdims=True)
    return jnp.einsum("bts,bsv->btv", p, v32).astype(q.dtype)
