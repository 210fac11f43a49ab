"""Reference for ``problems/hessian-vector-product``: forward-over-reverse Hessian-vector product."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp


def hvp(f: Callable[[Any], Any], x: Any, v: Any) -> Any:
    """``H(x) v`` for the scalar function ``f`` of the pytree ``x``: the derivative of ``grad f`` at ``x``
    in the direction ``v`` (``jax.jvp`` of ``jax.grad(f)``), without forming the Hessian. The result has
    the structure of ``x``, each leaf in ``x``'s leaf dtype (the menu functions compute in float32)."""
    tangent = jax.jvp(jax.grad(f), (x,), (v,))[1]
    return jax.tree.map(lambda t, leaf: t.astype(leaf.dtype), tangent, x)


def _quartic_terms(x: jax.Array, v: jax.Array) -> jax.Array:
    """``3 x^2 v``: one product per entry, nothing to cancel."""
    return 3.0 * x * x * jnp.abs(v)


def _coupled_cosine_terms(x: jax.Array, v: jax.Array) -> jax.Array:
    """``-cos(x) v + sum(v)``: the sum's terms and the diagonal term."""
    return jnp.abs(jnp.cos(x) * v) + jnp.sum(jnp.abs(v))


def _log_sum_exp_terms(x: jax.Array, v: jax.Array) -> jax.Array:
    """``p v - p (p . v)`` with ``p = softmax(x)``: the two terms and the dot product's terms."""
    p = jax.nn.softmax(x)
    return p * jnp.abs(v) + p * jnp.dot(p, jnp.abs(v))


def _soft_norm_terms(x: jax.Array, v: jax.Array) -> jax.Array:
    """``v / s - x (x . v) / s^3`` with ``s = sqrt(1 + |x|^2)``: the two terms and the dot product's."""
    s = jnp.sqrt(1.0 + jnp.sum(x * x))
    return jnp.abs(v) / s + jnp.abs(x) * jnp.dot(jnp.abs(x), jnp.abs(v)) / s**3


#: Per menu function (problems/hessian-vector-product/functions.py, by name): the magnitude of the terms
#: of each entry of ``H(x) v``, on the entries of every leaf flattened in order.
_TERMS: dict[str, Callable[[jax.Array, jax.Array], jax.Array]] = {
    "quartic": _quartic_terms,
    "coupled_cosine": _coupled_cosine_terms,
    "log_sum_exp": _log_sum_exp_terms,
    "soft_norm": _soft_norm_terms,
}


def hvp_magnitude(f: Callable[[Any], Any], x: Any, v: Any) -> Any:
    """Per element of ``H(x) v``, the magnitude of the terms that make it (``[compare] magnitude``), in
    float32, in the structure of ``x``: the products of the Hessian's parts with ``v`` add entries of both
    signs (the coupling sums, the softmax's ``p . v``), which cancel. Written per menu function; a function
    without its formula here fails, so that a new menu entry cannot go unbounded."""
    name = getattr(f, "__name__", "")
    if name not in _TERMS:
        raise ValueError(f"no magnitude formula for the menu function {name!r}")
    leaves, treedef = jax.tree.flatten(x)
    sizes = [leaf.size for leaf in leaves]
    flat_x = jnp.concatenate([jnp.ravel(leaf).astype(jnp.float32) for leaf in leaves] or [jnp.zeros(0)])
    flat_v = jnp.concatenate(
        [jnp.ravel(leaf).astype(jnp.float32) for leaf in jax.tree.leaves(v)] or [jnp.zeros(0)]
    )
    terms = _TERMS[name](flat_x, flat_v)
    out, start = [], 0
    for leaf, size in zip(leaves, sizes, strict=True):
        out.append(terms[start : start + size].reshape(leaf.shape))
        start += size
    return jax.tree.unflatten(treedef, out)
