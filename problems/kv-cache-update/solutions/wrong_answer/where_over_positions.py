"""Mistake: Rebuilds the cache with jnp.where

A where over every position: the right values, but every row is read and written (the rule refuses it).
"""
import jax.numpy as jnp


def update_kv_cache(k_cache, v_cache, k_new, v_new, pos):
    hit = (jnp.arange(k_cache.shape[0]) == pos)[:, None, None]
    return jnp.where(hit, k_new[None], k_cache), jnp.where(hit, v_new[None], v_cache)
