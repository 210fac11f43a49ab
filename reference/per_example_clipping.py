"""Reference for per-example-clipping: per-example gradients by vmap of grad, clipped, averaged."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def example_loss(w: Any, x_i: Any, y_i: Any) -> Any:
    """The loss of one example: half the squared error of the linear prediction ``x_i . w``."""
    return 0.5 * (jnp.dot(x_i, w) - y_i) ** 2


def per_example_clipping(w: Any, x: Any, y: Any, max_norm: Any) -> Any:
    """Return the mean over the batch of each example's gradient clipped to L2 norm ``max_norm``.

    ``w`` has shape ``(d,)``, ``x`` shape ``(batch, d)`` and ``y`` shape ``(batch,)``, all of the case
    dtype; ``max_norm > 0`` is a traced scalar. Example ``i``'s gradient ``g_i`` of :func:`example_loss`
    with respect to ``w`` comes from ``jax.vmap(jax.grad(example_loss))`` in float32; it is scaled by
    ``min(1, max_norm / ||g_i||)`` (1 when ``g_i`` is zero: the quotient is ``inf``), and the scaled
    gradients are averaged. The result has shape ``(d,)`` and the dtype of ``w``.
    """
    w32, x32, y32 = (a.astype(jnp.float32) for a in (w, x, y))
    grads = jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(w32, x32, y32)
    norms = jnp.sqrt(jnp.sum(grads * grads, axis=1))
    scale = jnp.minimum(1.0, max_norm / norms)
    return jnp.mean(grads * scale[:, None], axis=0).astype(w.dtype)


def per_example_clipping_magnitude(w: Any, x: Any, y: Any, max_norm: Any) -> Any:
    """Per element of the result, the magnitude of the terms that make it (``[compare] magnitude``), in
    float32: example ``i``'s residual ``x_i . w - y_i`` is made of terms of total size
    ``R_i = |x_i| . |w| + |y_i|``, so its gradient entry ``r_i x_id`` is known to ``R_i |x_id|`` times the
    rounding, scaled by the example's clip factor ``s_i``; the mean adds ``s_i R_i |x_id|`` over the batch
    (at least ``|s_i g_id|``, since ``R_i >= |r_i|``), whatever the signs that cancel in it."""
    w32, x32, y32 = (a.astype(jnp.float32) for a in (w, x, y))
    grads = jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(w32, x32, y32)
    norms = jnp.sqrt(jnp.sum(grads * grads, axis=1))
    scale = jnp.minimum(1.0, max_norm / norms)
    size = jnp.abs(x32) @ jnp.abs(w32) + jnp.abs(y32)
    return jnp.mean((scale * size)[:, None] * jnp.abs(x32), axis=0)
