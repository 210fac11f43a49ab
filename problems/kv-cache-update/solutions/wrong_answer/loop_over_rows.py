"""Mistake: Rewrites every row in a loop

A fori_loop writes each row in place, keeping the old row or the new one: in place in form, but it
touches every row (and the judge cannot measure a loop), so the rule refuses it.
"""
import jax
import jax.numpy as jnp


def update_kv_cache(k_cache, v_cache, k_new, v_new, pos):
    def step(t, caches):
        k, v = caches
        return k.at[t].set(jnp.where(t == pos, k_new, k[t])), v.at[t].set(jnp.where(t == pos, v_new, v[t]))

    return jax.lax.fori_loop(0, k_cache.shape[0], step, (k_cache, v_cache))
