"""Split into three keys at once, unpacked in order; jnp.where keeps the perturbed entries."""
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    new_key, noise_key, mask_key = jax.random.split(key, 3)
    noise = jax.random.normal(noise_key, x.shape, x.dtype)
    keep = jax.random.bernoulli(mask_key, 0.5, x.shape)
    return new_key, jnp.where(keep, x + noise, x)
