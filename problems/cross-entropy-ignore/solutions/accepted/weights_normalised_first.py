"""Weights normalised first: each counted row gets weight 1 / count, ignored rows 0, and the loss is the
weighted sum of the per-row losses (optax's softmax_cross_entropy_with_integer_labels style)."""
import jax
import jax.numpy as jnp


def cross_entropy(logits, labels):
    keep = labels != -100
    count = jnp.sum(keep.astype(jnp.int32))
    weights = keep / jnp.maximum(count, 1)
    shifted = logits - jax.lax.stop_gradient(jnp.max(logits, axis=-1, keepdims=True))
    lse = jnp.log(jnp.sum(jnp.exp(shifted), axis=-1))
    picked = jnp.take_along_axis(shifted, jnp.clip(labels, 0, None)[:, None], axis=-1)[:, 0]
    return jnp.dot(weights.astype(logits.dtype), lse - picked), count
