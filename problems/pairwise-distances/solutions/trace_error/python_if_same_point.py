# Trace error: a Python `if` on a traced comparison to special-case identical points.
import jax
import jax.numpy as jnp


def pairwise_distances(x, y):
    def dist(a, b):
        if jnp.all(a == b):
            return jnp.zeros((), jnp.float32)
        d = a.astype(jnp.float32) - b.astype(jnp.float32)
        return jnp.sqrt(jnp.sum(d * d))

    return jax.vmap(jax.vmap(dist, in_axes=(None, 0)), in_axes=(0, None))(x, y).astype(x.dtype)
