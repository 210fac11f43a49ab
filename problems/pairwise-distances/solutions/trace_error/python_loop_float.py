# Trace error: Python loops that call float() on traced values to fill a list of lists.
import jax.numpy as jnp


def pairwise_distances(x, y):
    rows = []
    for i in range(x.shape[0]):
        row = []
        for j in range(y.shape[0]):
            d = x[i].astype(jnp.float32) - y[j].astype(jnp.float32)
            row.append(float(jnp.sqrt(jnp.sum(d * d))))
        rows.append(row)
    return jnp.asarray(rows, dtype=x.dtype)
