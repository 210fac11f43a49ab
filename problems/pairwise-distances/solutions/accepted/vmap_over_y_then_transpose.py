# Nested vmap with the outer map over y (an (m, n) matrix), transposed at the end.
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    def dist(a, b):
        return jnp.sqrt(jnp.sum(jnp.square(a.astype(jnp.float32) - b.astype(jnp.float32))))

    by_y = jax.vmap(jax.vmap(dist, in_axes=(0, None)), in_axes=(None, 0))(x, y)
    return by_y.T.astype(x.dtype)
