"""Mistake: Negative indices dropped

Builds the update from a one-hot encoding (`jax.nn.one_hot`), which gives no row at all for a negative
index. In NumPy and JAX indexing -1 is the last row: add n to a negative index before encoding it.
"""
import jax
import jax.numpy as jnp


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    n = x.shape[0]
    extra = (1,) * (x.ndim - 1)
    hits = jax.nn.one_hot(set_idx, n, dtype=jnp.bool_)  # (k, n); all False for a negative index
    written = jnp.where(hits.reshape(hits.shape + extra), set_rows[:, None], 0.0).sum(axis=0)
    z = jnp.where(hits.any(axis=0).reshape((n,) + extra), written, x)
    adds = jax.nn.one_hot(add_idx, n, dtype=x.dtype)
    return z + jnp.tensordot(adds, add_rows, axes=(0, 0))
