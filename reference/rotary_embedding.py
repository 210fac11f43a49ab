"""Reference for ``problems/rotary-embedding``: rotate each (x[i], x[i + D/2]) pair by position * theta_i."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

#: The frequency base: theta_i = BASE ** (-2 i / D).
BASE = 10000.0


def rotary_embedding(x: Any, positions: Any) -> Any:
    """Rotary position embedding of ``x`` (shape ``(T, H, D)``, float32 or bfloat16) at ``positions``.

    ``positions`` is a traced int32 array of shape ``(T,)``. Entry ``i < D/2`` of each head is paired with
    entry ``i + D/2`` (split halves) and the pair is rotated by the angle ``positions[t] * theta_i``. The
    angles, their cosines and sines and the rotation are float32 whatever ``x``'s dtype; the result is cast
    to ``x.dtype`` once, at the end.
    """
    half = x.shape[-1] // 2
    exponents = jnp.arange(half, dtype=jnp.float32) * (2.0 / x.shape[-1])
    inv_freq = jnp.power(jnp.float32(BASE), -exponents)
    angles = positions.astype(jnp.float32)[:, None] * inv_freq[None, :]
    cos, sin = jnp.cos(angles)[:, None, :], jnp.sin(angles)[:, None, :]
    first = x[..., :half].astype(jnp.float32)
    second = x[..., half:].astype(jnp.float32)
    rotated = jnp.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)
    return rotated.astype(x.dtype)


def rotary_embedding_magnitude(x: Any, positions: Any) -> Any:
    """Per output element, the magnitude of the two terms of its rotation (``[compare] magnitude``):
    ``|x1 cos| + |x2 sin|`` for both halves, in float32; the difference (or sum) of the two products
    cancels when the pair is rotated onto an axis."""
    half = x.shape[-1] // 2
    exponents = jnp.arange(half, dtype=jnp.float32) * (2.0 / x.shape[-1])
    inv_freq = jnp.power(jnp.float32(BASE), -exponents)
    angles = positions.astype(jnp.float32)[:, None] * inv_freq[None, :]
    cos, sin = jnp.abs(jnp.cos(angles))[:, None, :], jnp.abs(jnp.sin(angles))[:, None, :]
    first = jnp.abs(x[..., :half].astype(jnp.float32))
    second = jnp.abs(x[..., half:].astype(jnp.float32))
    return jnp.concatenate([first * cos + second * sin, first * sin + second * cos], axis=-1)
