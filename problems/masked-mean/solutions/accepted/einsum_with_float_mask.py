# Accepted: the mask as 0/1 float weights; the masked sum is an einsum, the count a sum of the weights.
import jax.numpy as jnp


def masked_mean(x, mask):
    weights = mask.astype(jnp.float32)
    total = jnp.einsum("...n,...n->...", x.astype(jnp.float32), weights)
    count = jnp.sum(weights, axis=-1)
    return (total / jnp.maximum(count, 1.0)).astype(x.dtype)
