"""Mistake: Epsilon in norm

X / (||x|| + 1e-12), the usual trick against 0 / 0: harmless for large norms, but for a tiny w the vectors no
longer have norm 1 and sigma shrinks; the statement asks for no epsilon.
"""
import jax
import jax.numpy as jnp


def normalize(x):
    return x / (jnp.linalg.norm(x) + 1e-12)


def spectral_norm(w, u0, num_iters):
    w32 = w.astype(jnp.float32)

    def body(_, carry):
        u, _ = carry
        v = normalize(w32.T @ u)
        return normalize(w32 @ v), v

    u, v = jax.lax.fori_loop(0, num_iters, body, (u0.astype(jnp.float32), jnp.zeros(w.shape[1])))
    sigma = u @ w32 @ v
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
