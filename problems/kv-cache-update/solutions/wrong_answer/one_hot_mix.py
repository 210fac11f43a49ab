"""Mistake: A one-hot multiply-add

Mixes the old cache and the new row with a one-hot mask: right values, a full rewrite of both caches.
"""
import jax
import jax.numpy as jnp


def update_kv_cache(k_cache, v_cache, k_new, v_new, pos):
    hot = jax.nn.one_hot(pos, k_cache.shape[0], dtype=k_cache.dtype)[:, None, None]
    return k_cache * (1 - hot) + hot * k_new[None], v_cache * (1 - hot) + hot * v_new[None]
