"""Mistake: Carry key last

Takes the last key of the split as the new carry key and the first two for the draws. The convention
asked for (and the common one: `key, subkey = jax.random.split(key)`) keeps the first key as the carry.
"""
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    noise_key, mask_key, new_key = jax.random.split(key, 3)
    noise = jax.random.normal(noise_key, x.shape, x.dtype)
    keep = jax.random.bernoulli(mask_key, 0.5, x.shape)
    return new_key, jnp.where(keep, x + noise, x)
