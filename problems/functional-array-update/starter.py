def update_rows(x, set_idx, set_rows, add_idx, add_rows):
    """Overwrite the rows set_idx of x with set_rows, then add add_rows to the rows add_idx.

    Negative indices count from the end, indices out of range are dropped, repeated add indices add up.
    x, set_rows and add_rows are float32 arrays; set_idx and add_idx are int32 arrays; all traced.
    """
    # TODO: JAX arrays are immutable: build the result with x.at[...].set(...) and .add(...).
    return x
