# Correct: a Python loop over the (static) batch size and jnp.stack; the softmax of each sequence by hand.
import jax.numpy as jnp


def batched_attention(q, k, v, mask):
    outputs = []
    for b in range(q.shape[0]):
        qb, kb, vb = q[b].astype(jnp.float32), k[b].astype(jnp.float32), v[b].astype(jnp.float32)
        mb = mask[b] if mask.ndim == 3 else jnp.broadcast_to(mask[b], (q.shape[1], k.shape[1]))
        s = (qb / jnp.sqrt(jnp.float32(q.shape[-1]))) @ kb.T
        m = jnp.max(jnp.where(mb, s, -jnp.inf), axis=1, keepdims=True)
        m = jnp.where(jnp.any(mb, axis=1, keepdims=True), m, 0.0)
        e = jnp.where(mb, jnp.exp(jnp.minimum(s - m, 0.0)), 0.0)
        z = jnp.sum(e, axis=1, keepdims=True)
        outputs.append((e @ vb) / jnp.where(z == 0.0, 1.0, z))
    return jnp.stack(outputs).astype(q.dtype)
