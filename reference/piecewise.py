"""Reference for ``problems/piecewise-switch``: one of four elementwise functions, chosen by a traced
index with ``jax.lax.switch``, so that only the chosen one runs (and is differentiated)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

BRANCHES = (
    lambda x: x,
    jnp.sqrt,
    jnp.log,
    jnp.reciprocal,
)


def piecewise(x: Any, mode: Any) -> Any:
    """Return ``x``, ``sqrt(x)``, ``log(x)`` or ``1 / x`` elementwise for ``mode`` 0, 1, 2 or 3."""
    return jax.lax.switch(mode, BRANCHES, x)
