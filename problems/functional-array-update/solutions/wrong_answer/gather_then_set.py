"""Mistake: Repeated indices do not add up

Reads the rows, adds, and writes back with `.at[add_idx].set(y[add_idx] + add_rows)`: with a repeated index
every copy reads the same old row, so only one addition survives. `.at[add_idx].add(add_rows)` adds each.
"""


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    y = x.at[set_idx].set(set_rows)
    return y.at[add_idx].set(y[add_idx] + add_rows)
