"""The coin as a uniform draw below 1/2 (what jax.random.bernoulli does) and the noise masked by a float
multiply."""
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    new_key, noise_key, mask_key = jax.random.split(key, num=3)
    keep = jax.random.uniform(mask_key, x.shape) < 0.5
    noise = jax.random.normal(noise_key, x.shape)
    return new_key, x + keep.astype(x.dtype) * noise
