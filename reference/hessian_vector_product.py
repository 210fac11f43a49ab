"""Reference for ``problems/hessian-vector-product``: forward-over-reverse Hessian-vector product."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax


def hvp(f: Callable[[Any], Any], x: Any, v: Any) -> Any:
    """``H(x) v`` for the scalar function ``f`` of the pytree ``x``: the derivative of ``grad f`` at ``x``
    in the direction ``v`` (``jax.jvp`` of ``jax.grad(f)``), without forming the Hessian. The result has
    the structure of ``x``, each leaf in ``x``'s leaf dtype (the menu functions compute in float32)."""
    tangent = jax.jvp(jax.grad(f), (x,), (v,))[1]
    return jax.tree.map(lambda t, leaf: t.astype(leaf.dtype), tangent, x)
