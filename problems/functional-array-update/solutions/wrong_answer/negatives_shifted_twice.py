"""Mistake: Negative indices shifted twice

Adds n to every negative index by hand and then lets `.at[]` read the result: an index from -2n to -n - 1
becomes -n to -1, which `.at[]` counts from the end again, so an out-of-range index writes a row. Normalize
once (or not at all: `.at[]` does it).
"""
import jax.numpy as jnp


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    n = x.shape[0]
    set_idx = jnp.where(set_idx < 0, set_idx + n, set_idx)
    add_idx = jnp.where(add_idx < 0, add_idx + n, add_idx)
    return x.at[set_idx].set(set_rows).at[add_idx].add(add_rows)
