"""Mistake: One key for both draws

Draws the noise and the coins from the same subkey. Two draws from one key are not independent (the same
key gives the same bits), so the coins follow the noise. Split into three keys and give each draw its own.
"""
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    new_key, sub = jax.random.split(key)
    noise = jax.random.normal(sub, x.shape, x.dtype)
    keep = jax.random.bernoulli(sub, 0.5, x.shape)
    return new_key, jnp.where(keep, x + noise, x)
