"""Mistake: Compacts each row with jnp.compress(size=...)

jnp.compress with a fixed size traces, and its zero padding keeps the sum right; but compacting the selected
entries is boolean indexing in substance, which this problem refuses. Sum jnp.where(mask, x, 0) instead.
"""
import jax
import jax.numpy as jnp


def _row(values, selected):
    picked = jnp.compress(selected, values, size=values.shape[0], fill_value=0.0)
    return jnp.sum(picked) / jnp.maximum(jnp.sum(selected), 1)


def masked_mean(x, mask):
    n = x.shape[-1]
    rows = jax.vmap(_row)(x.astype(jnp.float32).reshape(-1, n), mask.reshape(-1, n))
    return rows.reshape(x.shape[:-1]).astype(x.dtype)
