"""Reference for ``problems/value-and-grad``: the half mean squared error of a linear model and its gradient
with respect to the parameters, both from one ``jax.value_and_grad``."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def _loss(params: Any, x: Any, y: Any) -> Any:
    """``1 / (2 n) * sum_i ||x_i W + b - y_i||^2``: half the squared error per example, averaged over the
    ``n`` examples (summed over the ``k`` outputs)."""
    residual = x @ params["w"] + params["b"] - y
    return 0.5 * jnp.sum(residual**2) / x.shape[0]


def loss_and_grad(params: Any, x: Any, y: Any) -> tuple[Any, Any]:
    """``(loss, grads)``: the loss at ``params`` and its gradient, a dict shaped like ``params``."""
    return jax.value_and_grad(_loss)(params, x, y)


def loss_and_grad_magnitude(params: Any, x: Any, y: Any) -> tuple[Any, Any]:
    """Per output element, the magnitude of the terms that make it (``[compare] magnitude``). Each residual
    ``r = x W + b - y`` is made of terms of total size ``R = |x| |W| + |b| + |y|``, so it is known to about
    ``eps R`` in any order of addition; the loss ``sum r^2 / (2 n)`` then to ``sum |r| R / n`` times that,
    and the gradients ``x^T r / n`` and ``sum_i r_i / n`` to ``|x|^T R / n`` and ``sum_i R_i / n``."""
    n = x.shape[0]
    ax = jnp.abs(x)
    big = ax @ jnp.abs(params["w"]) + jnp.abs(params["b"]) + jnp.abs(y)
    residual = jnp.abs(x @ params["w"] + params["b"] - y)
    loss = jnp.sum(residual * big) / n
    return loss, {"w": ax.T @ big / n, "b": jnp.sum(big, axis=0) / n}
