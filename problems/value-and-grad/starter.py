import jax
import jax.numpy as jnp


def loss_and_grad(params, x, y):
    """Runs inside jax.jit. params = {"w": (d, k), "b": (k,)}, x: (n, d), y: (n, k)."""
    # Your code here: write the loss as a function of params, then let jax.value_and_grad differentiate it.
    loss = jnp.float32(0.0)
    grads = jax.tree.map(jnp.zeros_like, params)
    return loss, grads
