"""Mistake: Ignored rows gathered

The label -100 is used as an index: JAX wraps a negative index (clamped or counted from the end), so an
ignored row contributes the loss of some class and the mean includes it. Mask the ignored rows out of
the sum (and the count) with labels != -100.
"""
import jax
import jax.numpy as jnp


def cross_entropy(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=1)
    picked = jnp.take_along_axis(logp, labels[:, None], axis=1, mode="clip")[:, 0]
    count = jnp.sum(labels != -100, dtype=jnp.int32)
    return -jnp.sum(picked) / jnp.maximum(count, 1), count
