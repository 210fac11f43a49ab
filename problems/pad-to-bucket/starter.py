import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    """Pad (or cut) each row of `tokens` to the smallest bucket that fits its length, and mask it.

    tokens: int32 (batch, length), traced; lengths: int32 (batch,), traced;
    buckets: static tuple of increasing ints; pad_id: static int.
    Return (padded, mask): int32 and bool arrays of shape (batch, bucket).
    """
    # TODO: pick the bucket in Python from tokens.shape[1], then build the mask from lengths.
    bucket = buckets[-1]
    padded = jnp.full((tokens.shape[0], bucket), pad_id, dtype=jnp.int32)
    mask = jnp.zeros((tokens.shape[0], bucket), dtype=bool)
    return padded, mask
