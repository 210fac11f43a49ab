"""Mistake: One iteration too few

Off by one: the first iteration is "the start" and the loop runs num_iters - 1 times from u0.
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

    u = normalize(u0.astype(jnp.float32))
    v = normalize(w32.T @ u)
    u, v = jax.lax.fori_loop(1, num_iters, body, (u, v))
    sigma = u @ w32 @ v
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
