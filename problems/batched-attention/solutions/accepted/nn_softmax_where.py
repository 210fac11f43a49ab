# Correct: vmap of a one-sequence function using jax.nn.softmax(where=mask), then zeros for fully masked rows.
import jax
import jax.numpy as jnp


def attend(q, k, v, mask):
    s = jnp.dot(q, k.T) / jnp.sqrt(q.shape[-1]).astype(jnp.float32)
    p = jax.nn.softmax(jnp.where(mask, s, 0.0), axis=-1, where=mask)
    p = jnp.where(mask, p, 0.0)
    has_key = jnp.any(mask, axis=-1, keepdims=True)
    return jnp.where(has_key, jnp.dot(p, v), 0.0)


def batched_attention(q, k, v, mask):
    if mask.ndim == 2:
        mask = jnp.repeat(mask[:, None, :], q.shape[1], axis=1)
    f = lambda x: x.astype(jnp.float32)  # noqa: E731
    return jax.vmap(attend)(f(q), f(k), f(v), mask).astype(q.dtype)
