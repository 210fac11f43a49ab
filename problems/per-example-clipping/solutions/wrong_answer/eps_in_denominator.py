"""Mistake: Epsilon in denominator

Scales by max_norm / (norm + 1e-6) (Opacus style): tiny gradients are clipped far below max_norm.
"""
import jax.numpy as jnp


def grads_of(w, x, y):
    w32, x32, y32 = w.astype(jnp.float32), x.astype(jnp.float32), y.astype(jnp.float32)
    r = x32 @ w32 - y32
    return r[:, None] * x32


def per_example_clipping(w, x, y, max_norm):
    G = grads_of(w, x, y)
    n = jnp.linalg.norm(G, axis=1, keepdims=True)
    s = jnp.minimum(1.0, max_norm / (n + 1e-6))
    return jnp.mean(G * s, axis=0).astype(w.dtype)
