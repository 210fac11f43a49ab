"""Mistake: Int32 mask

Returns the mask as int32 zeros and ones instead of bool.
"""
import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    length = tokens.shape[1]
    bucket = next((b for b in buckets if b >= length), buckets[-1])
    kept = tokens[:, :bucket]
    grown = jnp.pad(kept, ((0, 0), (0, bucket - kept.shape[1])), constant_values=pad_id)
    mask = (jnp.arange(bucket)[None, :] < lengths[:, None]).astype(jnp.int32)
    return jnp.where(mask == 1, grown, pad_id), mask
