# A missing closing bracket: the file does not parse.


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    return x.at[set_idx.set(set_rows).at[add_idx].add(add_rows)
