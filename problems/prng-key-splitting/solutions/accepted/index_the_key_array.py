"""Index the key array jax.random.split returns; add the noise where kept and 0 elsewhere."""
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    keys = jax.random.split(key, 3)
    noise = jax.random.normal(keys[1], shape=x.shape, dtype=jnp.float32)
    keep = jax.random.bernoulli(keys[2], p=0.5, shape=x.shape)
    return keys[0], x + jnp.where(keep, noise, 0.0)
