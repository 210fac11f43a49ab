"""Mistake: Loss without half

The loss (x_i . w - y_i)^2 without the 1/2: gradients below max_norm come out twice too large.
"""
import jax
import jax.numpy as jnp


def per_example_clipping(w, x, y, max_norm):
    def loss(w, x_i, y_i):
        return (jnp.dot(x_i, w) - y_i) ** 2

    f = lambda a: a.astype(jnp.float32)  # noqa: E731
    grads = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(f(w), f(x), f(y))
    norms = jnp.linalg.norm(grads, axis=1, keepdims=True)
    return jnp.mean(grads * jnp.minimum(1.0, max_norm / norms), axis=0).astype(w.dtype)
