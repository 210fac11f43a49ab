import jax
import jax.numpy as jnp


def cross_entropy(logits, labels):
    """Runs inside jax.jit: logits is a traced (n, c) float array, labels a traced (n,) int32 array."""
    count = jnp.sum(labels != -100, dtype=jnp.int32)
    # Your code here: the mean cross-entropy over the rows whose label is not -100.
    loss = jnp.zeros((), logits.dtype)
    return loss, count
