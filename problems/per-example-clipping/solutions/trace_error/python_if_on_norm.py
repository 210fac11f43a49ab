# Trace error: a Python `if` on the traced norm inside the vmapped function.
import jax
import jax.numpy as jnp


def per_example_clipping(w, x, y, max_norm):
    def clipped_grad(x_i, y_i):
        g = (jnp.dot(x_i, w) - y_i) * x_i
        norm = jnp.linalg.norm(g)
        if norm > max_norm:
            g = g * (max_norm / norm)
        return g

    return jnp.mean(jax.vmap(clipped_grad)(x, y), axis=0)
