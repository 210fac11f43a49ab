"""Mistake: Returns the input key

The draws are right, but the function hands back the key it was given instead of the new key from the
split. The caller passes that carry into the next step, which then splits the same key again and draws
the same noise and the same coins every time. Return the first key of `jax.random.split(key, 3)`.
"""
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    _, noise_key, mask_key = jax.random.split(key, 3)
    noise = jax.random.normal(noise_key, x.shape, x.dtype)
    keep = jax.random.bernoulli(mask_key, 0.5, x.shape)
    return key, jnp.where(keep, x + noise, x)
