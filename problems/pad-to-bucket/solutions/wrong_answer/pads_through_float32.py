"""Mistake: Padding through float32

The tokens and pad_id go through a float32 array, which holds every integer only up to 2**24: larger ids
come back rounded (2**31 - 1 even becomes 2**31, past int32). Keep ids in int32 end to end:
`jnp.where(mask, grown, jnp.int32(pad_id))` on int32 arrays.
"""

import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    length = tokens.shape[1]
    bucket = next((b for b in buckets if b >= length), buckets[-1])
    kept = tokens[:, :bucket].astype(jnp.float32)
    grown = jnp.pad(kept, ((0, 0), (0, bucket - kept.shape[1])))
    mask = jnp.arange(bucket, dtype=jnp.int32)[None, :] < lengths[:, None]
    padded = jnp.where(mask, grown, jnp.float32(pad_id))
    return padded.astype(jnp.int32), mask
