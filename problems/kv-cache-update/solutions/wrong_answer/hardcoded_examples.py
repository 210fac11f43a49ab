"""Mistake: Hard-codes the examples

Recognises the examples by their first cache entry and returns their row; otherwise writes row 0.
Reading the cache before writing it in place also makes XLA copy it first, which the rule refuses.
"""
import jax.numpy as jnp


def update_kv_cache(k_cache, v_cache, k_new, v_new, pos):
    row = jnp.where(k_cache[0, 0, 0] == 0.0, 2, jnp.where(k_cache[0, 0, 0] == 1.0, 31, 0))
    return k_cache.at[row].set(k_new), v_cache.at[row].set(v_new)
