"""A Python loop over the indices (their count is static), one scalar .at[] update each, in order."""


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    y = x
    for j in range(set_idx.shape[0]):
        y = y.at[set_idx[j]].set(set_rows[j])
    for j in range(add_idx.shape[0]):
        y = y.at[add_idx[j]].add(add_rows[j])
    return y
