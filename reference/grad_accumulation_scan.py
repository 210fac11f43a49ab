"""Reference for ``problems/grad-accumulation-scan``: mean loss and gradients over microbatches, by scan."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def _microbatch_loss(params: Any, batch: Any, target: Any) -> Any:
    """``0.5 * mean_j (pred_j - target)^2`` with ``pred_j = sum over leaves of <param leaf, x_j leaf>``."""
    preds = jnp.zeros((), jnp.float32)
    for w, x in zip(jax.tree.leaves(params), jax.tree.leaves(batch), strict=True):
        preds = preds + jnp.sum(x * w, axis=tuple(range(1, x.ndim)))
    return 0.5 * jnp.mean(jnp.square(preds - target))


def accumulate_gradients(params: Any, xs: Any, target: Any) -> tuple[Any, Any]:
    """Return ``(loss, grads)``: the microbatch losses and gradients averaged over the leading axis of
    ``xs``, accumulated one microbatch at a time with ``jax.lax.scan``.

    Arithmetic is float32 whatever the leaf dtype; ``loss`` is a float32 scalar and each gradient leaf is
    cast back to its parameter's dtype.
    """
    p32 = jax.tree.map(lambda p: p.astype(jnp.float32), params)
    n = jax.tree.leaves(xs)[0].shape[0]

    def step(carry: tuple[Any, Any], batch: Any) -> tuple[tuple[Any, Any], None]:
        loss_sum, grad_sum = carry
        batch = jax.tree.map(lambda x: x.astype(jnp.float32), batch)
        loss, grads = jax.value_and_grad(_microbatch_loss)(p32, batch, target)
        return (loss_sum + loss, jax.tree.map(jnp.add, grad_sum, grads)), None

    start = (jnp.zeros((), jnp.float32), jax.tree.map(jnp.zeros_like, p32))
    (loss_sum, grad_sum), _ = jax.lax.scan(step, start, xs)
    grads = jax.tree.map(lambda g, p: (g / n).astype(p.dtype), grad_sum, params)
    return loss_sum / n, grads


def accumulate_gradients_magnitude(params: Any, xs: Any, target: Any) -> tuple[Any, Any]:
    """Per element of ``(loss, grads)``, the magnitude of the terms that make it (``[compare] magnitude``),
    in float32. A prediction's residual ``r = sum <w, x> - target`` is made of terms of total size
    ``R = sum <|w|, |x|> + |target|``, so it is known to about ``eps R`` in any order of addition; the loss
    ``mean r^2 / 2`` then to ``mean |r| R`` times that, and a gradient ``mean r x`` to ``mean R |x|``
    (means over the microbatch and over the microbatches)."""
    p_leaves = [jnp.abs(p.astype(jnp.float32)) for p in jax.tree.leaves(params)]
    x_leaves = [jnp.abs(x.astype(jnp.float32)) for x in jax.tree.leaves(xs)]
    raw = [x.astype(jnp.float32) for x in jax.tree.leaves(xs)]
    w_leaves = [p.astype(jnp.float32) for p in jax.tree.leaves(params)]
    size = jnp.abs(jnp.float32(target))
    preds = -jnp.float32(target)
    for w, aw, x, ax in zip(w_leaves, p_leaves, raw, x_leaves, strict=True):
        axes = tuple(range(2, x.ndim))
        size = size + jnp.sum(ax * aw, axis=axes)
        preds = preds + jnp.sum(x * w, axis=axes)
    loss = jnp.mean(jnp.abs(preds) * size)

    def grad(ax: Any) -> Any:
        return jnp.mean(size.reshape(size.shape + (1,) * (ax.ndim - 2)) * ax, axis=(0, 1))

    treedef = jax.tree.structure(params)
    return loss, jax.tree.unflatten(treedef, [grad(ax) for ax in x_leaves])
