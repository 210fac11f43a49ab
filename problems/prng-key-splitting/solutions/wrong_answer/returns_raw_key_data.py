"""Mistake: Raw key data returned

Works on raw uint32 keys (`jax.random.key_data`, the legacy `jax.random.PRNGKey` style): the draws are
the same, but the carry it returns is two uint32 words, not a typed key. Keep the keys typed: split and
return the key `jax.random.split` gives.
"""
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    raw = jax.random.key_data(key)
    new_key, noise_key, mask_key = jax.random.split(raw, 3)
    noise = jax.random.normal(noise_key, x.shape, x.dtype)
    keep = jax.random.bernoulli(mask_key, 0.5, x.shape)
    return new_key, jnp.where(keep, x + noise, x)
