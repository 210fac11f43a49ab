"""A helper per draw, the keys unstacked from the split with a list; the result picked with lax.select."""
import jax
import jax.numpy as jnp


def _noise(key, like):
    return jax.random.normal(key, like.shape, like.dtype)


def _coins(key, like):
    return jax.random.bernoulli(key, 0.5, like.shape)


def split_and_perturb(key, x):
    new_key, noise_key, mask_key = list(jax.random.split(key, 3))
    return new_key, jax.lax.select(_coins(mask_key, x), x + _noise(noise_key, x), x)
