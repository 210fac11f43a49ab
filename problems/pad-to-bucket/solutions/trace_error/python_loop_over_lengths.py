# Slices each row by its traced length in a Python loop: int() of a tracer.
import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    length = tokens.shape[1]
    bucket = next((b for b in buckets if b >= length), buckets[-1])
    rows, masks = [], []
    for b in range(tokens.shape[0]):
        n = int(lengths[b])
        row = jnp.full((bucket,), pad_id, jnp.int32).at[:n].set(tokens[b, :n])
        rows.append(row)
        masks.append(jnp.arange(bucket) < n)
    return jnp.stack(rows), jnp.stack(masks)
