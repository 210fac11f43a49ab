"""Mistake: Draws with the input key

Splits off a new carry key but draws the noise and the coins with `key` itself. The next step splits the
new key, so nothing repeats yet, but `key` has now been used twice: once to split and once to draw. Draw
only with the subkeys the split gives you.
"""
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    new_key, noise_key, mask_key = jax.random.split(key, 3)
    noise = jax.random.normal(key, x.shape, x.dtype)
    keep = jax.random.bernoulli(mask_key, 0.5, x.shape)
    return new_key, jnp.where(keep, x + noise, x)
