import jax  # jax.grad and jax.vmap are the tools here
import jax.numpy as jnp


def per_example_clipping(w, x, y, max_norm):
    """Runs inside jax.jit: w (d,), x (batch, d), y (batch,) and max_norm are traced. Return shape (d,)."""

    def loss(w, x_i, y_i):
        # The loss of one example: 0.5 * (x_i . w - y_i) ** 2. Your code here.
        return jnp.zeros((), dtype=jnp.float32)

    # Per-example gradients with jax.vmap of jax.grad, clipped to max_norm each, then averaged.
    return jnp.zeros_like(w)
