"""Mistake: Pads with zero

Pads with 0 whatever pad_id is.
"""
import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    length = tokens.shape[1]
    bucket = next((b for b in buckets if b >= length), buckets[-1])
    kept = tokens[:, :bucket]
    grown = jnp.pad(kept, ((0, 0), (0, bucket - kept.shape[1])))
    mask = jnp.arange(bucket)[None, :] < lengths[:, None]
    return jnp.where(mask, grown, 0), mask
