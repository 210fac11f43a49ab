import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    """Split `key` into (new_key, noise_key, mask_key); add standard normal noise drawn with noise_key
    to the entries of x that a fair coin drawn with mask_key keeps. Return (new_key, y).

    key is a typed PRNG key (jax.random.key), traced; x is a float32 array with 1 or 2 dimensions.
    """
    new_key = noise_key = mask_key = key  # TODO: split the key with jax.random.split(key, 3)
    noise = jnp.zeros_like(x)  # TODO: draw it with jax.random.normal from noise_key
    keep = jnp.zeros(x.shape, dtype=bool)  # TODO: draw it with jax.random.bernoulli from mask_key
    del noise_key, mask_key
    return new_key, jnp.where(keep, x + noise, x)
