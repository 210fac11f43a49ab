# Trace error: a Python loop over the batch calling float() on each traced norm.
import jax
import jax.numpy as jnp


def per_example_clipping(w, x, y, max_norm):
    total = jnp.zeros(w.shape, jnp.float32)
    for i in range(x.shape[0]):
        g = jax.grad(lambda w: 0.5 * (jnp.dot(x[i], w) - y[i]) ** 2)(w)
        norm = float(jnp.linalg.norm(g))
        total = total + g * min(1.0, max_norm / norm)
    return (total / x.shape[0]).astype(w.dtype)
