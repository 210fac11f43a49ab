"""Mistake: Writes the row as old + (new - old)

k_cache.at[pos].add(k_new - k_cache[pos]) is an in-place write of the new row in exact arithmetic, but in
float32 new - old rounds at the size of the old value: a row of 10^4 overwritten by 0.001 keeps an error of
about 10^-4 per entry. Write the new row itself: k_cache.at[pos].set(k_new).
"""


def update_kv_cache(k_cache, v_cache, k_new, v_new, pos):
    k = k_cache.at[pos].add(k_new - k_cache[pos])
    v = v_cache.at[pos].add(v_new - v_cache[pos])
    return k, v
