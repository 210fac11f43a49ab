"""Mistake: A key made inside the function

Ignores its key and starts from `jax.random.key(42)`, the first example's key: the examples pass, but
every call draws the same numbers whatever key it is given. Draw with the key argument.
"""
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    new_key, noise_key, mask_key = jax.random.split(jax.random.key(42), 3)
    noise = jax.random.normal(noise_key, x.shape, x.dtype)
    keep = jax.random.bernoulli(mask_key, 0.5, x.shape)
    return new_key, jnp.where(keep, x + noise, x)
