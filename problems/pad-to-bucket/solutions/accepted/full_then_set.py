# A pad-filled canvas, the kept tokens written with .at[].set, then masked with jnp.where.
import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    batch, length = tokens.shape
    fitting = [b for b in buckets if b >= length]
    bucket = fitting[0] if fitting else max(buckets)
    keep = min(length, bucket)
    canvas = jnp.full((batch, bucket), pad_id, dtype=jnp.int32)
    canvas = canvas.at[:, :keep].set(tokens[:, :keep])
    positions = jnp.broadcast_to(jnp.arange(bucket, dtype=jnp.int32), (batch, bucket))
    mask = positions < jnp.expand_dims(lengths, 1)
    return jnp.where(mask, canvas, jnp.int32(pad_id)), mask
