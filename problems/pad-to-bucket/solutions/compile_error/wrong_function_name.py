# Compile error: the function is named pad_batch, not pad_to_bucket.
import jax.numpy as jnp


def pad_batch(tokens, lengths, buckets, pad_id):
    bucket = next((b for b in buckets if b >= tokens.shape[1]), buckets[-1])
    grown = jnp.pad(tokens[:, :bucket], ((0, 0), (0, bucket - min(bucket, tokens.shape[1]))))
    mask = jnp.arange(bucket)[None, :] < lengths[:, None]
    return jnp.where(mask, grown, pad_id), mask
