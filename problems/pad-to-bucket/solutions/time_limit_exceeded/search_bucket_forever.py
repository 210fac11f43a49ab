# Time limit: grows a candidate bucket until it is in `buckets`, which never happens past the largest one.
import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    bucket = tokens.shape[1]
    while bucket not in buckets:
        bucket += 1
    grown = jnp.pad(tokens, ((0, 0), (0, bucket - tokens.shape[1])), constant_values=pad_id)
    mask = jnp.arange(bucket)[None, :] < lengths[:, None]
    return jnp.where(mask, grown, pad_id), mask
