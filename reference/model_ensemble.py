"""Reference for ``problems/model-ensemble``: every member of an ensemble of two-layer ReLU networks applied
to the same inputs, with ``jax.vmap`` over the members' stacked parameters."""

from __future__ import annotations

from typing import Any

import jax


def _member(params: Any, x: Any) -> Any:
    """One network: ``relu(x @ w1 + b1) @ w2 + b2``, shape ``(n, k)``."""
    hidden = jax.nn.relu(x @ params["w1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


def ensemble_predict(params: Any, x: Any) -> Any:
    """Every member's predictions, shape ``(E, n, k)``: the member function mapped over axis 0 of every
    leaf of ``params`` (``in_axes=0``) and not over ``x`` (``in_axes=None``: all members see the same
    inputs)."""
    return jax.vmap(_member, in_axes=(0, None))(params, x)


def ensemble_predict_magnitude(params: Any, x: Any) -> Any:
    """Per output element, the sum of the absolute values of the terms of both layers (``[compare]
    magnitude``): the same networks on absolute values, where the ReLU keeps every (non-negative) unit, so
    ``|b2| + sum_j |w2_j| (|b1_j| + sum_i |x_i| |w1_ij|)``."""
    return ensemble_predict(jax.tree.map(abs, params), abs(x))
