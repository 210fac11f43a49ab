"""Both draws from the keys' raw bits. The coin: jax.random.bernoulli(k, 0.5) is uniform(k) < 1/2, and
uniform puts the top 23 of 32 random bits in the mantissa of a float in [1, 2) less 1, so the coin is True
exactly when the top bit is 0. The noise: jax.random.normal is sqrt(2) erfinv(u) for u uniform in
(-1, 1), the inverse of the normal CDF, written out here."""
import jax
import jax.numpy as jnp
import numpy as np


def split_and_perturb(key, x):
    new_key, noise_key, mask_key = jax.random.split(key, 3)
    keep = (jax.random.bits(mask_key, x.shape, jnp.uint32) >> 31) == 0
    low = np.nextafter(np.float32(-1.0), np.float32(0.0))
    u = jax.random.uniform(noise_key, x.shape, jnp.float32, minval=low, maxval=1.0)
    noise = np.float32(np.sqrt(2.0)) * jax.lax.erf_inv(u)
    return new_key, jnp.where(keep, x + noise, x)
