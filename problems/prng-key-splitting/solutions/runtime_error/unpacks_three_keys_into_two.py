# Splits into three keys but unpacks two names: Python raises ValueError while the function is traced.
import jax
import jax.numpy as jnp


def split_and_perturb(key, x):
    new_key, sub = jax.random.split(key, 3)
    noise = jax.random.normal(sub, x.shape, x.dtype)
    return new_key, jnp.where(jax.random.bernoulli(sub, 0.5, x.shape), x + noise, x)
