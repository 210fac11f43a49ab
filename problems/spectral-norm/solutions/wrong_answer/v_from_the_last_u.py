"""Mistake: V from the last u

Updates u first and v second in each iteration (u from the previous v), so v is half a step ahead of u.
"""
import jax
import jax.numpy as jnp


def normalize(x):
    norm = jnp.linalg.norm(x)
    return jnp.where(norm > 0, x / jnp.where(norm > 0, norm, 1.0), 0.0)


def spectral_norm(w, u0, num_iters):
    w32 = w.astype(jnp.float32)
    v = normalize(w32.T @ u0.astype(jnp.float32))

    def body(_, carry):
        _, v = carry
        u = normalize(w32 @ v)
        return u, normalize(w32.T @ u)

    u, v = jax.lax.fori_loop(0, num_iters, body, (u0.astype(jnp.float32), v))
    sigma = u @ w32 @ v
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
