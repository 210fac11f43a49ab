"""The set step as a mask (each row is set at most once) with jnp.where; the add step as a scatter-add."""
import jax.numpy as jnp


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    n = x.shape[0]
    rows = jnp.where(set_idx < 0, set_idx + n, set_idx)
    hits = rows[:, None] == jnp.arange(n)[None, :]  # (k, n): entry j sets row r
    extra = (1,) * (x.ndim - 1)
    written = jnp.where(hits.reshape(hits.shape + extra), set_rows[:, None], 0.0).sum(axis=0)
    z = jnp.where(hits.any(axis=0).reshape((n,) + extra), written, x)
    return z.at[add_idx].add(add_rows)
