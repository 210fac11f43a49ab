"""Reference for ``problems/pad-to-bucket``: pad a batch of token rows to a bucket length and mask it."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp


def bucket_length(length: int, buckets: tuple[int, ...]) -> int:
    """The smallest bucket that holds ``length`` tokens; the largest bucket when none does."""
    return next((b for b in buckets if b >= length), buckets[-1])


def pad_to_bucket(tokens: Any, lengths: Any, buckets: tuple[int, ...], pad_id: int) -> tuple[Any, Any]:
    """Return ``(padded, mask)`` of shape ``(batch, B)``, ``B = bucket_length(tokens.shape[1], buckets)``.

    ``tokens`` (int32, traced) is cut to its first ``B`` columns or padded to ``B``; ``mask[b, j]`` is True
    iff ``j < lengths[b]`` (``lengths``: int32, traced); ``padded`` holds the row's tokens where the mask is
    True and ``pad_id`` everywhere else. ``buckets`` and ``pad_id`` are static Python values, so ``B`` is a
    Python int and the output shapes are known when the function is traced.
    """
    length = tokens.shape[1]
    width = bucket_length(length, buckets)
    kept = tokens[:, :width]
    grown = jnp.pad(kept, ((0, 0), (0, width - kept.shape[1])), constant_values=pad_id)
    mask = jnp.arange(width, dtype=jnp.int32)[None, :] < lengths[:, None]
    return jnp.where(mask, grown, jnp.int32(pad_id)), mask
