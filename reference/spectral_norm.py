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


def spectral_norm_magnitude(
    w: jax.Array, u0: jax.Array, num_iters: int
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Per element of ``(sigma, u, v)``, the magnitude of the terms of the last products that make it
    (``[compare] magnitude``), in float32: ``|u| . (|w| |v|)`` for ``sigma``; ``(|w| |v|) / ||w v||`` for
    ``u`` and ``(|w|^T |u'|) / ||w^T u'||`` for ``v`` (``u'`` the ``u`` it was computed from), the
    normalised sizes of the products whose entries of both signs cancel. Earlier iterations' roundings
    fade as the iteration converges, so the last step's terms are the ones that count."""
    w32 = w.astype(jnp.float32)

    def body(_: int, carry: tuple[jax.Array, jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array, jax.Array]:
        u, _v, _previous = carry
        v = _normalize(w32.T @ u)
        return _normalize(w32 @ v), v, u

    u0 = u0.astype(jnp.float32)
    start = (u0, jnp.zeros(w.shape[1], jnp.float32), u0)
    u, v, previous = jax.lax.fori_loop(0, num_iters, body, start)
    aw = jnp.abs(w32)

    def over_norm(terms: jax.Array, product: jax.Array) -> jax.Array:
        norm = jnp.sqrt(jnp.sum(product * product))
        return jnp.where(norm > 0, terms / jnp.where(norm > 0, norm, 1.0), 0.0)

    sigma = jnp.dot(jnp.abs(u), aw @ jnp.abs(v))
    return sigma, over_norm(aw @ jnp.abs(v), w32 @ v), over_norm(aw.T @ jnp.abs(previous), w32.T @ previous)
