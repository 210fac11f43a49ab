"""Mistake: Python for loop

Right values, but a Python for loop over num_iters: unrolled while tracing, no loop in the program, so the
rule rejects it.
"""
import jax.numpy as jnp


def normalize(x):
    norm = jnp.linalg.norm(x)
    return jnp.where(norm > 0, x / jnp.where(norm > 0, norm, 1.0), 0.0)


def spectral_norm(w, u0, num_iters):
    w32 = w.astype(jnp.float32)
    u, v = u0.astype(jnp.float32), jnp.zeros(w.shape[1], jnp.float32)
    for _ in range(num_iters):
        v = normalize(w32.T @ u)
        u = normalize(w32 @ v)
    sigma = u @ w32 @ v
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
