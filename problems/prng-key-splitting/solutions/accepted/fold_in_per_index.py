"""The three keys by jax.random.fold_in of 0, 1 and 2: with threefry's partitionable split (JAX's default
since 0.5), split(key, 3)[i] is the threefry hash of the counter (0, i) under key, which is exactly what
fold_in(key, i) computes. The coin from jax.random.bernoulli, the noise added where it is True."""
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    new_key, noise_key, mask_key = (jax.random.fold_in(key, i) for i in range(3))
    noise = jax.random.normal(noise_key, x.shape, x.dtype)
    keep = jax.random.bernoulli(mask_key, 0.5, x.shape)
    return new_key, jnp.where(keep, x + noise, x)
