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


def tanh_stack_magnitude(ws: Any, x: Any) -> tuple[Any, dict[str, Any]]:
    """Per output element, a bound on the magnitude of the terms that make it (``[compare] magnitude``), as
    the pair (output, gradient) that a ``[gradient]`` problem returns. Forward: a layer's sum ``h @ w`` is
    made of terms of total size ``|h| @ |w|``, and an error already in ``h`` reaches the next layer through
    ``|w|`` (``tanh`` never enlarges one), so ``M_l = (|h_{l-1}| + M_{l-1}) @ |w_l|``. Backward with the ones
    cotangent: ``g_{l-1} = (g_l (1 - h_l^2)) @ w_l^T`` and ``dW_l = h_{l-1}^T @ (g_l (1 - h_l^2))``, whose
    terms are bounded the same way with ``|1 - h^2| <= 1``."""
    w = jnp.abs(ws).astype(jnp.float32)
    h = x.astype(jnp.float32)
    hs, sizes = [h], [jnp.zeros_like(h)]
    for i in range(ws.shape[0]):
        sizes.append((jnp.abs(h) + sizes[-1]) @ w[i])
        h = jnp.tanh(h @ ws[i].astype(jnp.float32))
        hs.append(h)
    g = jnp.ones_like(h)
    g_size = jnp.zeros_like(h)
    w_sizes = []
    for i in reversed(range(ws.shape[0])):
        delta = jnp.abs(g) + g_size
        w_sizes.append((jnp.abs(hs[i]) + sizes[i]).T @ delta)
        g = (g * (1 - hs[i + 1] ** 2)) @ ws[i].astype(jnp.float32).T
        g_size = delta @ w[i].T
    w_sizes.reverse()
    return sizes[-1], {"ws": jnp.stack(w_sizes), "x": g_size}
