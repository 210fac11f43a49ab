# Turns the traced position into a Python int to index with it.


def update_kv_cache(k_cache, v_cache, k_new, v_new, pos):
    row = int(pos)
    return k_cache.at[row].set(k_new), v_cache.at[row].set(v_new)
