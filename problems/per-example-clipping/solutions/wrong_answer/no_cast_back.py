"""Mistake: No cast back

Computes in float32 and forgets the cast back, so bfloat16 inputs get a float32 result.
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
    return jnp.mean(grads * jnp.minimum(1.0, max_norm / norms), axis=0)
