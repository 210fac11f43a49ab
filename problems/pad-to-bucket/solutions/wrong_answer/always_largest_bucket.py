"""Mistake: Always largest bucket

Pads every batch to the largest bucket.
"""
import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    bucket = buckets[-1]
    kept = tokens[:, :bucket]
    grown = jnp.pad(kept, ((0, 0), (0, bucket - kept.shape[1])), constant_values=pad_id)
    mask = jnp.arange(bucket)[None, :] < lengths[:, None]
    return jnp.where(mask, grown, pad_id), mask
