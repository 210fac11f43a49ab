# Boolean-mask indexing (tokens[mask]) gives a shape that depends on the traced lengths.
import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    length = tokens.shape[1]
    bucket = next((b for b in buckets if b >= length), buckets[-1])
    mask = jnp.arange(bucket)[None, :] < lengths[:, None]
    padded = jnp.full(mask.shape, pad_id, jnp.int32)
    real = jnp.pad(tokens[:, :bucket], ((0, 0), (0, max(0, bucket - length))))[mask]
    return padded.at[mask].set(real), mask
