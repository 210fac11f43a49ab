"""Reference for ``problems/linear-recurrence-scan``: the linear recurrence ``h_t = a_t h_{t-1} + b_t``
for every t at once, by ``jax.lax.associative_scan`` over the composition of affine maps."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def _compose(first: tuple[Any, Any], second: tuple[Any, Any]) -> tuple[Any, Any]:
    """The affine map ``h -> a2 (a1 h + b1) + b2``: apply ``first``, then ``second``."""
    a1, b1 = first
    a2, b2 = second
    return a2 * a1, a2 * b1 + b2


def linear_recurrence(a: Any, b: Any) -> Any:
    """Return every ``h_t`` (shape and dtype of ``b``) with ``h_{-1} = 0``; time is axis 0."""
    return jax.lax.associative_scan(_compose, (a, b))[1]


def linear_recurrence_magnitude(a: Any, b: Any) -> Any:
    """Per output element, the magnitude of the terms that make it (``[compare] magnitude``): ``h_t`` is
    the sum over ``s <= t`` of ``b_s`` times the product of the ``a`` after it, so the same recurrence on
    ``|a|`` and ``|b|`` gives the sum of the terms' absolute values, which bounds what any grouping of the
    scan (sequential, a tree of combines, either direction) rounds."""
    return jax.lax.associative_scan(
        _compose, (jnp.abs(a).astype(jnp.float32), jnp.abs(b).astype(jnp.float32))
    )[1]
