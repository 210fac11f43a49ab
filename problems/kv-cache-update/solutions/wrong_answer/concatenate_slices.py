"""Mistake: Concatenates the cache around the new row

Rolls the cache, replaces its first row and rolls back: the right values, built from copies of the cache.
"""
import jax.numpy as jnp


def _rebuild(cache, new, pos):
    rolled = jnp.roll(cache, -pos, axis=0)
    return jnp.roll(jnp.concatenate([new[None], rolled[1:]]), pos, axis=0)


def update_kv_cache(k_cache, v_cache, k_new, v_new, pos):
    return _rebuild(k_cache, k_new, pos), _rebuild(v_cache, v_new, pos)
