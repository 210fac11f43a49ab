# A Python `if` on a traced coin flip: under jax.jit its value is unknown.
import jax


def split_and_perturb(key, x):
    new_key, noise_key, mask_key = jax.random.split(key, 3)
    if jax.random.bernoulli(mask_key, 0.5):
        x = x + jax.random.normal(noise_key, x.shape, x.dtype)
    return new_key, x
