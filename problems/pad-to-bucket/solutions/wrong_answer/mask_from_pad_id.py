"""Mistake: Mask from pad id

Derives the mask from the ids (tokens != pad_id) instead of from lengths.
"""
import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    length = tokens.shape[1]
    bucket = next((b for b in buckets if b >= length), buckets[-1])
    kept = tokens[:, :bucket]
    grown = jnp.pad(kept, ((0, 0), (0, bucket - kept.shape[1])), constant_values=pad_id)
    mask = grown != pad_id
    return grown, mask
