"""Mistake: Two splits in a row

Splits off one subkey at a time (`key, sub = jax.random.split(key)` twice). That is a valid habit, but it
makes other keys than one split into three: `jax.random.split(key, 3)` is not two splits in two.
"""
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    key, noise_key = jax.random.split(key)
    key, mask_key = jax.random.split(key)
    noise = jax.random.normal(noise_key, x.shape, x.dtype)
    keep = jax.random.bernoulli(mask_key, 0.5, x.shape)
    return key, jnp.where(keep, x + noise, x)
