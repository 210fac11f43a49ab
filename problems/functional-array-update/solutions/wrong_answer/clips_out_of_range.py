"""Mistake: Out-of-range indices clipped

Uses `mode="clip"`, which moves an index past the end onto the last row (and one before -n onto the first)
instead of dropping it. Out-of-range updates must write nothing, which is the default of `.at[]` updates.
"""


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    y = x.at[set_idx].set(set_rows, mode="clip")
    return y.at[add_idx].add(add_rows, mode="clip")
