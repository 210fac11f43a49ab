"""Reference for ``problems/safe-norm-jvp``: the Euclidean norm over the last axis, scaled so that it
neither overflows nor underflows, with a custom JVP whose derivative at a zero vector is zero."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


@jax.custom_jvp
def _norm(x: jax.Array) -> jax.Array:
    scale = jnp.max(jnp.abs(x), axis=-1, keepdims=True)
    safe = jnp.where(scale > 0, scale, 1.0)
    return safe[..., 0] * jnp.sqrt(jnp.sum(jnp.square(x / safe), axis=-1))


@_norm.defjvp
def _norm_jvp(primals: tuple[jax.Array], tangents: tuple[jax.Array]) -> tuple[jax.Array, jax.Array]:
    (x,), (t,) = primals, tangents
    n = _norm(x)
    nonzero = (n > 0)[..., None]
    unit = jnp.where(nonzero, x / jnp.where(nonzero, n[..., None], 1.0), 0.0)
    return n, jnp.sum(unit * t, axis=-1)


def safe_norm(x: Any) -> Any:
    """Return ``sqrt(sum(x**2, axis=-1))`` computed as ``m * sqrt(sum((x / m)**2))`` with ``m`` the largest
    magnitude of the slice, and a derivative ``x / ||x||`` that is 0 for a zero slice."""
    return _norm(x)
