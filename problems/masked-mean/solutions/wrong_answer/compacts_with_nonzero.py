"""Mistake: Compacts the selected entries with jnp.nonzero

jnp.nonzero(mask, size=n) keeps a fixed size, so it traces, and the values are right; but gathering the
selected entries is boolean indexing in substance, which this problem refuses. Zero the unselected entries
with jnp.where(mask, x, 0) and sum them instead.
"""
import jax
import jax.numpy as jnp


def _row(values, selected):
    n = values.shape[0]
    (index,) = jnp.nonzero(selected, size=n, fill_value=0)
    count = jnp.sum(selected)
    picked = jnp.where(jnp.arange(n) < count, values[index], 0.0)
    return jnp.sum(picked) / jnp.maximum(count, 1)


def masked_mean(x, mask):
    n = x.shape[-1]
    rows = jax.vmap(_row)(x.astype(jnp.float32).reshape(-1, n), mask.reshape(-1, n))
    return rows.reshape(x.shape[:-1]).astype(x.dtype)
