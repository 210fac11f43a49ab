"""Reference for ``problems/spectral-norm``: the largest singular value of ``w`` by power iteration."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def _normalize(x: jax.Array) -> jax.Array:
    """``x / ||x||_2``, and the zero vector for ``x == 0`` (no epsilon: a nonzero ``x`` gets norm 1)."""
    norm = jnp.sqrt(jnp.sum(x * x))
    nonzero = norm > 0
    return jnp.where(nonzero, x / jnp.where(nonzero, norm, 1.0), jnp.zeros_like(x))


def spectral_norm(w: jax.Array, u0: jax.Array, num_iters: int) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Return ``(sigma, u, v)`` after ``num_iters`` power iterations on ``w`` of shape ``(m, n)``.

    Starting from ``u = u0`` (shape ``(m,)``), each iteration sets ``v = normalize(w.T @ u)`` and then
    ``u = normalize(w @ v)``; ``sigma = u @ (w @ v)`` with the last ``u`` and ``v``. Arithmetic is float32
    whatever the input dtype, and the three results are cast to ``w``'s dtype. ``num_iters`` is static
    and at least 1; the loop is one ``jax.lax.fori_loop``.
    """
    w32 = w.astype(jnp.float32)

    def body(_: int, carry: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        u, _v = carry
        v = _normalize(w32.T @ u)
        return _normalize(w32 @ v), v

    start = (u0.astype(jnp.float32), jnp.zeros(w.shape[1], jnp.float32))
    u, v = jax.lax.fori_loop(0, num_iters, body, start)
    sigma = jnp.dot(u, w32 @ v)
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
