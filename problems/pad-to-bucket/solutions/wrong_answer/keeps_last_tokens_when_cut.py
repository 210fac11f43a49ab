"""Mistake: Keeps last tokens when cut

When cutting to the largest bucket, keeps the last tokens of each row instead of the first.
"""
import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    length = tokens.shape[1]
    bucket = next((b for b in buckets if b >= length), buckets[-1])
    kept = tokens[:, -bucket:] if length > bucket else tokens
    grown = jnp.pad(kept, ((0, 0), (0, bucket - kept.shape[1])), constant_values=pad_id)
    mask = jnp.arange(bucket)[None, :] < lengths[:, None]
    return jnp.where(mask, grown, pad_id), mask
