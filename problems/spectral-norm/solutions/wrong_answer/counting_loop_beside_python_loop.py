"""Mistake: Counting loop beside Python loop

A fori_loop that only counts, beside the real work in an unrolled Python loop; the rule wants the matrix-
vector products inside the loop, so it rejects this.
"""
import jax
import jax.numpy as jnp


def normalize(x):
    norm = jnp.linalg.norm(x)
    return jnp.where(norm > 0, x / jnp.where(norm > 0, norm, 1.0), 0.0)


def spectral_norm(w, u0, num_iters):
    w32 = w.astype(jnp.float32)
    one = jax.lax.fori_loop(0, num_iters, lambda i, c: c * 1.0, jnp.float32(1.0))
    u, v = u0.astype(jnp.float32), jnp.zeros(w.shape[1], jnp.float32)
    for _ in range(num_iters):
        v = normalize(w32.T @ u)
        u = normalize(w32 @ v)
    sigma = one * (u @ w32 @ v)
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
