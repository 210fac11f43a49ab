"""Mistake: Normalise first NaN

Normalises first, g / |g| * min(|g|, max_norm): a fitted example's zero gradient gives 0/0 = nan.
"""
import jax
import jax.numpy as jnp


def loss(w, x_i, y_i):
    return 0.5 * (jnp.dot(x_i, w) - y_i) ** 2


def per_example_grads(w, x, y):
    f = lambda a: a.astype(jnp.float32)  # noqa: E731
    return jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(f(w), f(x), f(y))


def per_example_clipping(w, x, y, max_norm):
    grads = per_example_grads(w, x, y)
    norms = jnp.linalg.norm(grads, axis=1, keepdims=True)
    return jnp.mean(grads / norms * jnp.minimum(norms, max_norm), axis=0).astype(w.dtype)
