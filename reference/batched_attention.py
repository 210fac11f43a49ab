"""Reference for ``problems/batched-attention``: masked scaled dot-product attention, vmapped over a batch."""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp


def attend(q: Any, k: Any, v: Any, mask: Any) -> Any:
    """Attention of one sequence in float32: ``q`` (T, d), ``k`` (S, d), ``v`` (S, dv), ``mask`` (T, S) bool.

    Scores are ``q @ k.T / sqrt(d)``; each row's softmax runs over its allowed keys only (``mask`` True),
    after subtracting the largest allowed score. A row without any allowed key gets the output 0.
    """
    scores = (q @ k.T) / math.sqrt(q.shape[-1])
    row_max = jnp.max(jnp.where(mask, scores, -jnp.inf), axis=-1, keepdims=True)
    safe_max = jnp.where(jnp.isfinite(row_max), row_max, 0.0)
    weights = jnp.where(mask, jnp.exp(jnp.where(mask, scores - safe_max, 0.0)), 0.0)
    total = jnp.sum(weights, axis=-1, keepdims=True)
    probs = weights / jnp.where(total > 0.0, total, 1.0)
    return probs @ v


def batched_attention(q: Any, k: Any, v: Any, mask: Any) -> Any:
    """Return ``(B, T, dv)`` in ``q``'s dtype: :func:`attend` vmapped over the batch, computed in float32.

    ``mask`` is ``(B, T, S)``, or ``(B, S)`` (a key-padding mask shared by every query), True where a
    query may attend to a key.
    """
    batch, queries, _ = q.shape
    if mask.ndim == 2:
        mask = jnp.broadcast_to(mask[:, None, :], (batch, queries, mask.shape[-1]))
    f32 = jnp.float32
    out = jax.vmap(attend)(q.astype(f32), k.astype(f32), v.astype(f32), mask)
    return out.astype(q.dtype)


def batched_attention_magnitude(q: Any, k: Any, v: Any, mask: Any) -> Any:
    """Per output element, the magnitude of the terms that make it (``[compare] magnitude``): the
    attention weights applied to ``|v|`` (``probs @ |v|``), in float32; values of both signs cancel in the
    weighted sum, the weights themselves are positive. A score's own rounding (``q @ k.T`` cancels too)
    is what the problem's widened float32 tolerance covers (problem.toml)."""
    batch, queries, _ = q.shape
    if mask.ndim == 2:
        mask = jnp.broadcast_to(mask[:, None, :], (batch, queries, mask.shape[-1]))
    f32 = jnp.float32

    def one(q: Any, k: Any, v: Any, mask: Any) -> Any:
        scores = (q @ k.T) / math.sqrt(q.shape[-1])
        row_max = jnp.max(jnp.where(mask, scores, -jnp.inf), axis=-1, keepdims=True)
        safe_max = jnp.where(jnp.isfinite(row_max), row_max, 0.0)
        weights = jnp.where(mask, jnp.exp(jnp.where(mask, scores - safe_max, 0.0)), 0.0)
        total = jnp.sum(weights, axis=-1, keepdims=True)
        return (weights / jnp.where(total > 0.0, total, 1.0)) @ jnp.abs(v)

    return jax.vmap(one)(q.astype(f32), k.astype(f32), v.astype(f32), mask)
