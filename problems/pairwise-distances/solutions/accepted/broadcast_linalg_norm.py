# Broadcasting instead of vmap: (n, 1, d) - (1, m, d), then jnp.linalg.norm over the last axis in float32.
import jax.numpy as jnp


def pairwise_distances(x, y):
    diff = x.astype(jnp.float32)[:, None, :] - y.astype(jnp.float32)[None, :, :]
    return jnp.linalg.norm(diff, axis=-1).astype(x.dtype)
