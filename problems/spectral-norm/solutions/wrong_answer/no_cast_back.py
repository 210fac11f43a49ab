"""Mistake: No cast back

Computes in float32 and forgets to cast back: bfloat16 cases get float32 results.
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

    u, v = jax.lax.fori_loop(0, num_iters, body, (u0.astype(jnp.float32), jnp.zeros(w.shape[1])))
    return u @ w32 @ v, u, v
