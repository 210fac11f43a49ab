"""Reference for ``problems/sgd-momentum``: one SGD-with-momentum step over matching pytrees."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


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


def sgd_momentum_magnitude(
    params: Any, grads: Any, velocity: Any, learning_rate: Any, momentum: Any
) -> tuple[Any, Any]:
    """Per element of ``(new_params, new_velocity)``, the magnitude of the terms that make it
    (``[compare] magnitude``), in float32: ``|momentum v| + |g|`` for the velocity and
    ``|p| + |learning_rate| (|momentum v| + |g|)`` for the parameter; both sums cancel when their terms
    have opposite signs."""

    def terms(g: Any, v: Any) -> Any:
        return abs(momentum) * jnp.abs(v.astype(jnp.float32)) + jnp.abs(g.astype(jnp.float32))

    velocity_terms = jax.tree.map(terms, grads, velocity)
    param_terms = jax.tree.map(
        lambda p, m: jnp.abs(p.astype(jnp.float32)) + abs(learning_rate) * m, params, velocity_terms
    )
    return param_terms, velocity_terms
