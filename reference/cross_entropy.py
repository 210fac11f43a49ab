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


def cross_entropy_magnitude(logits: Any, labels: Any) -> tuple[Any, Any]:
    """Per output element, the magnitude of the terms that make it (``[compare] magnitude``). A row's term
    ``logsumexp(z) - z_y`` is made of ``m``, ``log(sum(exp(z - m)))`` and ``z_y``: written as
    ``logsumexp(z) - z_y`` it cancels when the label's logit is the row's largest, so it is known to about
    ``eps (|m| + log(sum) + |z_y|)`` in any order; the mean adds those over the kept rows. The count is an
    integer, compared exactly."""
    z = logits.astype(jnp.float32)
    keep = labels != IGNORE
    safe = jnp.where(keep, labels, 0)
    top = jnp.max(z, axis=1)
    spread = jnp.log(jnp.sum(jnp.exp(z - top[:, None]), axis=1))
    picked = jnp.take_along_axis(z, safe[:, None], axis=1)[:, 0]
    size = jnp.abs(top) + spread + jnp.abs(picked)
    count = jnp.sum(keep, dtype=jnp.int32)
    total = jnp.sum(jnp.where(keep, size, 0.0))
    return total / jnp.maximum(count, 1), jnp.zeros((), jnp.float32)
