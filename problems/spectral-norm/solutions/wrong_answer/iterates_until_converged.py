"""Mistake: Iterates until converged

Ignores num_iters and runs 1000 iterations to get "the" spectral norm: that is the exact norm, not the
estimate after num_iters iterations the statement asks for.
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

    u, v = jax.lax.fori_loop(0, 1000, body, (u0.astype(jnp.float32), jnp.zeros(w.shape[1])))
    sigma = u @ w32 @ v
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
