"""One small write per head: a Python loop over the H heads (unrolled while tracing, at most 4) writes
row pos of each head with .at[pos, h].set, so each cache takes H in-place scatters of D values each."""


def update_kv_cache(k_cache, v_cache, k_new, v_new, pos):
    for h in range(k_cache.shape[1]):
        k_cache = k_cache.at[pos, h].set(k_new[h])
        v_cache = v_cache.at[pos, h].set(v_new[h])
    return k_cache, v_cache
