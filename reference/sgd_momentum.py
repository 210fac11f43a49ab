"""Reference for ``problems/sgd-momentum``: one SGD-with-momentum step over matching pytrees."""

from __future__ import annotations

from typing import Any

import jax


def sgd_momentum(
    params: Any, grads: Any, velocity: Any, learning_rate: Any, momentum: Any
) -> tuple[Any, Any]:
    """Return ``(new_params, new_velocity)``: ``v2 = momentum * v + g`` and ``p2 = p - learning_rate * v2``.

    ``learning_rate`` and ``momentum`` arrive as Python floats (weakly typed under ``jax.jit``), so the
    arithmetic stays in each leaf's dtype: bfloat16 leaves give bfloat16 results. New containers are built;
    the inputs are left untouched.
    """
    new_velocity = jax.tree.map(lambda g, v: momentum * v + g, grads, velocity)
    new_params = jax.tree.map(lambda p, v: p - learning_rate * v, params, new_velocity)
    return new_params, new_velocity
