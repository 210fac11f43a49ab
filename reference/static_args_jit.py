"""Reference for ``problems/static-args-jit``: one reduction over one axis, chosen by static arguments."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp


def _logsumexp(x: Any, axis: int) -> Any:
    """``log(sum(exp(x)))`` over ``axis``, axis kept: shifted by each slice's own max, so no exp overflows
    and the largest term of every slice is exp(0) = 1 (the log never sees 0)."""
    peak = jnp.max(x, axis=axis, keepdims=True)
    return peak + jnp.log(jnp.sum(jnp.exp(x - peak), axis=axis, keepdims=True))


def reduce_axis(x: Any, axis: int, mode: str, keepdims: bool) -> Any:
    """Reduce the float32 array ``x`` (traced) over ``axis`` with ``mode``.

    ``axis`` (a Python int, negative counts from the end), ``mode`` (``"sum"``, ``"mean"``, ``"max"`` or
    ``"logsumexp"``) and ``keepdims`` (a Python bool) are static: the branch below is plain Python, taken
    once per compile.
    """
    if mode == "sum":
        kept = jnp.sum(x, axis=axis, keepdims=True)
    elif mode == "mean":
        kept = jnp.mean(x, axis=axis, keepdims=True)
    elif mode == "max":
        kept = jnp.max(x, axis=axis, keepdims=True)
    else:
        kept = _logsumexp(x, axis)
    return kept if keepdims else jnp.squeeze(kept, axis=axis)


def reduce_axis_magnitude(x: Any, axis: int, mode: str, keepdims: bool) -> Any:
    """Per element of the result, the magnitude of the terms that make it (``[compare] magnitude``): the
    sum (or mean) of ``|x|`` over the slice for ``"sum"`` and ``"mean"``, whose terms of both signs cancel;
    ``|max|`` for ``"max"`` (exact in any order); for ``"logsumexp"``, ``max |x|`` over the slice plus the
    log of the shifted sum: a shift by another constant, or the peak added back in another place, rounds
    at the size of the values, while the result near 0 can be a peak and a log that cancel."""
    ax = jnp.abs(x)
    if mode == "sum":
        kept = jnp.sum(ax, axis=axis, keepdims=True)
    elif mode == "mean":
        kept = jnp.mean(ax, axis=axis, keepdims=True)
    elif mode == "max":
        kept = jnp.abs(jnp.max(x, axis=axis, keepdims=True))
    else:
        peak = jnp.max(x, axis=axis, keepdims=True)
        shifted = jnp.sum(jnp.exp(x - peak), axis=axis, keepdims=True)
        kept = jnp.max(ax, axis=axis, keepdims=True) + jnp.log(shifted)
    return kept if keepdims else jnp.squeeze(kept, axis=axis)
