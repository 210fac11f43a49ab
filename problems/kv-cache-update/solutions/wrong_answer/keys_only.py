"""Mistake: Only the keys are written

Updates the key cache and returns the value cache as it came.
"""


def update_kv_cache(k_cache, v_cache, k_new, v_new, pos):
    return k_cache.at[pos].set(k_new), v_cache
