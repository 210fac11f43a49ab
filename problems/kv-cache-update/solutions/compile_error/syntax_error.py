# A missing closing bracket: the file does not parse.


def update_kv_cache(k_cache, v_cache, k_new, v_new, pos):
    return k_cache.at[pos.set(k_new), v_cache.at[pos].set(v_new)
