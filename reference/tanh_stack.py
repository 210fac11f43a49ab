"""Reference for ``problems/remat-tanh-stack``: a stack of tanh layers, each rematerialised with
``jax.checkpoint`` so that the backward pass recomputes its activation instead of storing it."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def _layer(h: jax.Array, w: jax.Array) -> jax.Array:
    return jnp.tanh(h @ w)


def tanh_stack(ws: Any, x: Any) -> Any:
    """Return ``h_L`` where ``h_0 = x`` and ``h_l = tanh(h_{l-1} @ ws[l-1])``; every layer is wrapped in
    ``jax.checkpoint``, so its gradient recomputes ``tanh(h @ w)`` from the saved input ``h``."""
    layer = jax.checkpoint(_layer)
    h = x
    for i in range(ws.shape[0]):
        h = layer(h, ws[i])
    return h
