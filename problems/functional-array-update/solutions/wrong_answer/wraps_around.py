"""Mistake: Indices wrapped around

Takes every index modulo n, which is right for -n to n - 1 but turns an out-of-range index into some other
row. Out-of-range indices are dropped, not wrapped.
"""


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    n = x.shape[0]
    return x.at[set_idx % n].set(set_rows).at[add_idx % n].add(add_rows)
