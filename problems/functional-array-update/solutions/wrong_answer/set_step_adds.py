"""Mistake: .add where .set is meant

Adds set_rows to the rows instead of replacing them. `.at[i].add(v)` gives x[i] + v; to overwrite a row use
`.at[i].set(v)`.
"""


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    return x.at[set_idx].add(set_rows).at[add_idx].add(add_rows)
