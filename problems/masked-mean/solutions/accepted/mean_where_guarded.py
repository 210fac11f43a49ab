# Accepted: jnp.mean's where= argument does the masked sum and count; the empty rows (NaN there) are replaced by 0.
import jax.numpy as jnp


def masked_mean(x, mask):
    mean = jnp.mean(x.astype(jnp.float32), axis=-1, where=mask)
    return jnp.where(jnp.any(mask, axis=-1), mean, 0.0).astype(x.dtype)
