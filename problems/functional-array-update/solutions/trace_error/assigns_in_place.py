# NumPy-style assignment into a JAX array: JAX arrays are immutable, so this cannot be traced.


def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    y = x
    y[set_idx] = set_rows
    y[add_idx] += add_rows
    return y
