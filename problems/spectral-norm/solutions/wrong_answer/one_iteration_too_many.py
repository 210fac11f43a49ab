"""Mistake: One iteration too many

Off by one: a first iteration before the loop, then num_iters more in it (num_iters + 1 in all).
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
        v = normalize(w32.T @ u)
        return normalize(w32 @ v), v

    v = normalize(w32.T @ u0.astype(jnp.float32))
    u = normalize(w32 @ v)
    u, v = jax.lax.fori_loop(0, num_iters, body, (u, v))
    sigma = u @ w32 @ v
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
