"""One .at[].set and one .at[].add, chained."""


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    return x.at[set_idx].set(set_rows).at[add_idx].add(add_rows)
