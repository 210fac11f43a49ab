# A missing closing bracket: the file does not parse.
import jax


def split_and_perturb(key, x):
    new_key, noise_key, mask_key = jax.random.split(key, 3
    return new_key, x
