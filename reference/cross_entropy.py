"""Reference for ``problems/cross-entropy-ignore``: the mean softmax cross-entropy over the labels that are
not the ignore label, computed with a shifted log-sum-exp, and the number of labels counted."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

IGNORE = -100


def cross_entropy(logits: Any, labels: Any) -> tuple[Any, Any]:
    """Return ``(loss, count)``: ``count`` (int32) labels differ from -100, and ``loss`` (the logits' dtype)
    is the mean over those rows of ``logsumexp(logits[i]) - logits[i, labels[i]]``, 0 when ``count`` is 0.
    Each row's term is ``(m - z_y) + log(sum(exp(z - m)))`` with ``m`` the row's largest logit, so that no
    exponential overflows and no large value is subtracted from another."""
    keep = labels != IGNORE
    safe = jnp.where(keep, labels, 0)
    top = jnp.max(logits, axis=1, keepdims=True)
    shifted = logits - top
    picked = jnp.take_along_axis(shifted, safe[:, None], axis=1)[:, 0]
    terms = jnp.log(jnp.sum(jnp.exp(shifted), axis=1)) - picked
    count = jnp.sum(keep, dtype=jnp.int32)
    total = jnp.sum(jnp.where(keep, terms, 0.0))
    return (total / jnp.maximum(count, 1)).astype(logits.dtype), count
