# Accepted: x * mask for the sum, jnp.count_nonzero for the count, then a multiply by the reciprocal.
import jax.numpy as jnp


def masked_mean(x, mask):
    total = jnp.sum(x.astype(jnp.float32) * mask, axis=-1, keepdims=True)
    count = jnp.count_nonzero(mask, axis=-1, keepdims=True)
    inverse = jnp.where(count > 0, 1.0 / jnp.maximum(count, 1), 0.0)
    return jnp.squeeze(total * inverse, axis=-1).astype(x.dtype)
