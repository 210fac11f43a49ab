"""Mistake: U0 as right vector

Treats u0 as the right vector: v = normalize(w @ u), u = normalize(w.T @ v). Square matrices give wrong values
(the iteration runs on w.T instead of w); non-square ones do not even have matching shapes.
"""
import jax
import jax.numpy as jnp


def normalize(x):
    norm = jnp.linalg.norm(x)
    return jnp.where(norm > 0, x / jnp.where(norm > 0, norm, 1.0), 0.0)


def spectral_norm(w, u0, num_iters):
    w32 = w.astype(jnp.float32)

    def body(_, carry):
        u, _ = carry
        v = normalize(w32 @ u)
        return normalize(w32.T @ v), v

    u, v = jax.lax.fori_loop(0, num_iters, body, (u0.astype(jnp.float32), jnp.zeros(w.shape[0])))
    sigma = v @ w32 @ u
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
