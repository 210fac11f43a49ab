"""Mistake: .set where .add is meant

Overwrites the rows of add_idx with add_rows instead of adding to them: the value already there is lost, and
of a repeated index only one row survives. `.at[i].add(v)` adds, and adds every repeat.
"""


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    return x.at[set_idx].set(set_rows).at[add_idx].set(add_rows)
