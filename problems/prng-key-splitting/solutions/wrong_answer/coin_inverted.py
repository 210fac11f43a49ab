"""Mistake: Coin inverted

Perturbs the entries whose coin came up False and keeps the others. With a fair coin both halves look
alike, but they are not the same entries: add the noise where `jax.random.bernoulli` is True.
"""
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    new_key, noise_key, mask_key = jax.random.split(key, 3)
    noise = jax.random.normal(noise_key, x.shape, x.dtype)
    keep = jax.random.bernoulli(mask_key, 0.5, x.shape)
    return new_key, jnp.where(keep, x, x + noise)
