"""Reference for ``problems/masked-mean``: the mean of the entries a boolean mask selects, along the last
axis, with masked sums (no boolean indexing)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp


def masked_mean(x: Any, mask: Any) -> Any:
    """``sum(x * mask) / count(mask)`` over the last axis, 0 where a row selects nothing.

    The sum is taken in float32 whatever the case dtype and the count as an int32 (exact), then the
    quotient is cast back to ``x.dtype``. The count is clamped to 1 before dividing, so an empty row
    divides 0 by 1 and no NaN is ever made.
    """
    total = jnp.sum(jnp.where(mask, x.astype(jnp.float32), 0.0), axis=-1)
    count = jnp.sum(mask, axis=-1, dtype=jnp.int32)
    return (total / jnp.maximum(count, 1).astype(jnp.float32)).astype(x.dtype)


def masked_mean_magnitude(x: Any, mask: Any) -> Any:
    """Per row, the sum of the absolute values of the terms of the mean (``[compare] magnitude``): the
    masked mean of ``|x|``, in float32."""
    return masked_mean(jnp.abs(x).astype(jnp.float32), mask)
