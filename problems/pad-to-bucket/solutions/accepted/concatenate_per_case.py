# Pads by concatenating a pad block (or slices when cutting), and multiplies instead of jnp.where.
import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    batch, length = tokens.shape
    bucket = buckets[-1]
    for b in reversed(buckets):
        if b >= length:
            bucket = b
    if length >= bucket:
        body = tokens[:, :bucket]
    else:
        body = jnp.concatenate([tokens, jnp.full((batch, bucket - length), pad_id, jnp.int32)], axis=1)
    mask = jnp.arange(bucket) < lengths.reshape(batch, 1)
    keep = mask.astype(jnp.int32)
    return body * keep + jnp.int32(pad_id) * (1 - keep), mask
