"""Reference for functional-array-update: set rows, then add rows, with JAX's .at[] updates."""


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    return x.at[set_idx].set(set_rows).at[add_idx].add(add_rows)


def update_rows_magnitude(x, set_idx, set_rows, add_idx, add_rows):
    """Per element, the sum of the absolute values of the terms that make it (``[compare] magnitude``): the
    same updates on absolute values, since a set keeps only its new value and an add sums its terms."""
    import jax.numpy as jnp

    return update_rows(jnp.abs(x), set_idx, jnp.abs(set_rows), add_idx, jnp.abs(add_rows))
