"""Reference for prng-key-splitting: split the key three ways, keep the first as the new carry key."""

import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    new_key, noise_key, mask_key = jax.random.split(key, 3)
    noise = jax.random.normal(noise_key, x.shape, x.dtype)
    keep = jax.random.bernoulli(mask_key, 0.5, x.shape)
    return new_key, jnp.where(keep, x + noise, x)
