"""Mistake: Gram matrix squares the scale

Iterates on the Gram matrix g = w.T @ w: the same directions on paper, but g @ v has the scale of w squared,
so for a tiny w (values ~1e-10) its squared norm underflows to 0 in float32 and the vectors collapse to zero.
(With num_iters = 1 the loop has no iteration left and the rule rejects it too.).
"""
import jax
import jax.numpy as jnp


def normalize(x):
    norm = jnp.sqrt(jnp.dot(x, x))
    return jnp.where(norm > 0, x / jnp.maximum(norm, jnp.finfo(jnp.float32).tiny), 0.0)


def spectral_norm(w, u0, num_iters):
    w32 = w.astype(jnp.float32)
    g = w32.T @ w32
    v1 = normalize(w32.T @ u0.astype(jnp.float32))
    v = jax.lax.fori_loop(1, num_iters, lambda _, v: normalize(g @ v), v1)
    wv = w32 @ v
    u = normalize(wv)
    sigma = jnp.dot(u, wv)
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
