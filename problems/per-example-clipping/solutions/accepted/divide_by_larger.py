# vmap of grad; scale = max_norm / max(norm, max_norm), which is never a division by zero.
import jax
import jax.numpy as jnp


def per_example_clipping(w, x, y, max_norm):
    def loss(w, x_i, y_i):
        return 0.5 * jnp.square(jnp.vdot(x_i, w) - y_i)

    f = lambda a: a.astype(jnp.float32)  # noqa: E731
    grads = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(f(w), f(x), f(y))
    norms = jnp.sqrt(jnp.sum(grads**2, axis=-1))
    clipped = grads * (max_norm / jnp.maximum(norms, max_norm))[:, None]
    return (jnp.sum(clipped, axis=0) / x.shape[0]).astype(w.dtype)
