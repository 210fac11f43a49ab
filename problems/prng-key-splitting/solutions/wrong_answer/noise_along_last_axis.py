"""Mistake: Noise of the wrong shape

Draws one noise vector of the last axis' length and lets broadcasting repeat it over the rows, so every
row gets the same noise. Draw the noise with the full shape of x (`x.shape`).
"""
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    new_key, noise_key, mask_key = jax.random.split(key, 3)
    noise = jax.random.normal(noise_key, x.shape[-1:], x.dtype)
    keep = jax.random.bernoulli(mask_key, 0.5, x.shape)
    return new_key, jnp.where(keep, x + noise, x)
