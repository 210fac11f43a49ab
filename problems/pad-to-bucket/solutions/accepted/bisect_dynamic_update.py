# bisect finds the bucket; lax.dynamic_update_slice writes the tokens into a pad-filled array.
import bisect

import jax
import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    length = tokens.shape[1]
    index = bisect.bisect_left(buckets, length)
    bucket = buckets[min(index, len(buckets) - 1)]
    base = jnp.full((tokens.shape[0], bucket), pad_id, tokens.dtype)
    body = jax.lax.dynamic_update_slice(base, tokens[:, :bucket], (0, 0))
    mask = jax.lax.broadcasted_iota(jnp.int32, base.shape, 1) < lengths[:, None]
    return jnp.where(mask, body, base), mask
