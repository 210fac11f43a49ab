"""Mistake: Subkeys swapped

Draws the noise with the third key and the coins with the second. Both are fresh keys, so the draws look
just as random, but they are not the ones asked for: keep the order new key, noise key, mask key.
"""
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    new_key, mask_key, noise_key = jax.random.split(key, 3)
    noise = jax.random.normal(noise_key, x.shape, x.dtype)
    keep = jax.random.bernoulli(mask_key, 0.5, x.shape)
    return new_key, jnp.where(keep, x + noise, x)
