"""Mistake: Sets a row by adding the difference to the old value

x.at[i].add(new - x[i]) equals x.at[i].set(new) in exact arithmetic, but in float32 new - old rounds at the
size of the old value: a row of 1,000 overwritten by 0.001 comes out a few percent off. Write the new
value itself: x.at[set_idx].set(set_rows).
"""


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    z = x.at[set_idx].add(set_rows - x[set_idx])
    return z.at[add_idx].add(add_rows)
