# Compile error: the function is named pairwise_distance, not pairwise_distances.
import jax.numpy as jnp


def pairwise_distance(x, y):
    return jnp.linalg.norm(x[:, None, :] - y[None, :, :], axis=-1)
