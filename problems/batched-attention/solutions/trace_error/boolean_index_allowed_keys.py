# Trace error: selects the allowed keys with boolean indexing, whose result shape depends on traced values.
import jax.numpy as jnp


def batched_attention(q, k, v, mask):
    rows = []
    for b in range(q.shape[0]):
        for t in range(q.shape[1]):
            allowed = mask[b, t] if mask.ndim == 3 else mask[b]
            keys, values = k[b][allowed].astype(jnp.float32), v[b][allowed].astype(jnp.float32)
            s = keys @ q[b, t].astype(jnp.float32) / jnp.sqrt(jnp.float32(q.shape[-1]))
            p = jnp.exp(s - jnp.max(s))
            rows.append(p @ values / jnp.sum(p))
    return jnp.stack(rows).reshape(q.shape[0], q.shape[1], v.shape[2]).astype(q.dtype)
