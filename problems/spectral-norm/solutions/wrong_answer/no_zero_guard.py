"""Mistake: No zero guard

Divides by the norm unconditionally: the zero matrix (or w.T @ u0 = 0) gives 0 / 0 = nan instead of zeros.
"""
import jax
import jax.numpy as jnp


def spectral_norm(w, u0, num_iters):
    w32 = w.astype(jnp.float32)

    def body(_, carry):
        u, _ = carry
        v = w32.T @ u
        v = v / jnp.linalg.norm(v)
        u = w32 @ v
        return u / jnp.linalg.norm(u), v

    u, v = jax.lax.fori_loop(0, num_iters, body, (u0.astype(jnp.float32), jnp.zeros(w.shape[1])))
    sigma = u @ w32 @ v
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
