"""Mistake: Count as float

The count is returned as a float32 (the sum of a float mask): the statement asks for an int32 count.
Sum the boolean mask with dtype=jnp.int32.
"""
import jax
import jax.numpy as jnp


def cross_entropy(logits, labels):
    keep = (labels != -100).astype(logits.dtype)
    logp = jax.nn.log_softmax(logits, axis=1)
    picked = jnp.take_along_axis(logp, jnp.maximum(labels, 0)[:, None], axis=1)[:, 0]
    count = jnp.sum(keep)
    return -jnp.sum(keep * picked) / jnp.maximum(count, 1.0), count
