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
