"""Reference for ``problems/pairwise-distances``: Euclidean distances between two point sets, nested vmap."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def _distance(a: Any, b: Any) -> Any:
    """The Euclidean distance between two points of shape ``(d,)``, from their difference, in float32.

    The difference is scaled by a power of two near its largest entry before squaring, and the root scaled
    back: exact scalings, so the result is the plain ``sqrt(sum(diff**2))`` wherever no square leaves
    float32's normal range, and still right where squares of tiny differences (below about 1e-19) would
    underflow (the CPU flushes subnormals to zero).
    """
    diff = a.astype(jnp.float32) - b.astype(jnp.float32)
    _, exponent = jnp.frexp(jnp.max(jnp.abs(diff), initial=0.0))
    scaled = jnp.ldexp(diff, -exponent)
    return jnp.ldexp(jnp.sqrt(jnp.sum(scaled * scaled)), exponent)


def pairwise_distances(x: Any, y: Any) -> Any:
    """Return ``D`` of shape ``(n, m)`` with ``D[i, j] = ||x[i] - y[j]||_2``, in the dtype of ``x``.

    ``x`` has shape ``(n, d)`` and ``y`` shape ``(m, d)``, both of the case dtype. The inner ``vmap`` maps
    one point of ``x`` against every row of ``y``; the outer one maps that over the rows of ``x``. Every
    distance is computed from the difference of the two points (never as ``|a|^2 + |b|^2 - 2 a.b``, which
    cancels), in float32, and is exactly 0 for identical points.
    """
    row = jax.vmap(_distance, in_axes=(None, 0))
    return jax.vmap(row, in_axes=(0, None))(x, y).astype(x.dtype)
