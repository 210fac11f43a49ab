"""Mistake: Normalize only at the end

Multiplies by w.T and w in the loop and normalises only once at the end: the same directions on paper, but the
vectors grow or shrink like sigma^(2k) and overflow (large w) or underflow (tiny w) in float32.
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
        v = w32.T @ u
        return w32 @ v, v

    u, v = jax.lax.fori_loop(0, num_iters, body, (u0.astype(jnp.float32), jnp.zeros(w.shape[1])))
    u, v = normalize(u), normalize(v)
    sigma = u @ w32 @ v
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
