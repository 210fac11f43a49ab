# Assumes some bucket always fits: min() of an empty sequence when the rows are longer than every bucket.
import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    length = tokens.shape[1]
    bucket = min(b for b in buckets if b >= length)
    grown = jnp.pad(tokens, ((0, 0), (0, bucket - length)), constant_values=pad_id)
    mask = jnp.arange(bucket)[None, :] < lengths[:, None]
    return jnp.where(mask, grown, pad_id), mask
