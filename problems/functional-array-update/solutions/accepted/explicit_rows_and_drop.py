"""Normalize every index to its row by hand, send the out-of-range ones to row n (out of range, dropped)."""
import jax.numpy as jnp


def _rows(idx, n):
    valid = (idx >= -n) & (idx < n)
    return jnp.where(valid, jnp.where(idx < 0, idx + n, idx), n)


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    n = x.shape[0]
    y = x.at[_rows(set_idx, n)].set(set_rows, mode="drop")
    return y.at[_rows(add_idx, n)].add(add_rows, mode="drop")
