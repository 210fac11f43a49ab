"""A helper writes each cache with dynamic_update_slice; start indices of pos's own dtype."""
import jax
import jax.numpy as jnp


def _write(cache, new, pos):
    # The same start index in every dimension but the first; zeros of pos's dtype.
    zero = jnp.zeros_like(pos)
    return jax.lax.dynamic_update_slice(cache, jnp.expand_dims(new, 0), (pos, zero, zero))


def update_kv_cache(k_cache, v_cache, k_new, v_new, pos):
    return _write(k_cache, k_new, pos), _write(v_cache, v_new, pos)
