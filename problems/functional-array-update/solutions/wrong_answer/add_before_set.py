"""Mistake: Add before set

Adds first and sets afterwards, so a row named in both loses its additions. The order matters: set, then
add.
"""


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    return x.at[add_idx].add(add_rows).at[set_idx].set(set_rows)
