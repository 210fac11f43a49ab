"""Mistake: Zero guard threshold 1e-12

Guards the division with `norm > 1e-12` instead of `norm > 0`: a tiny but valid w (norms below 1e-12, the
constraints allow down to 1e-15) gets zero vectors instead of unit ones.
"""
import jax
import jax.numpy as jnp


def _normalize(x):
    n = jnp.linalg.norm(x)
    return jnp.where(n > 1e-12, x / jnp.maximum(n, 1e-12), 0.0)


def spectral_norm(w, u0, num_iters):
    w32 = w.astype(jnp.float32)

    def body(i, carry):
        u, _ = carry
        v = _normalize(w32.T @ u)
        return _normalize(w32 @ v), v

    start = (u0.astype(jnp.float32), jnp.zeros(w.shape[1], jnp.float32))
    u, v = jax.lax.fori_loop(0, num_iters, body, start)
    s = u @ w32 @ v
    return s.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
