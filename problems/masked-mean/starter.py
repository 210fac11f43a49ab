import jax.numpy as jnp


def masked_mean(x, mask):
    """Runs inside jax.jit: x and mask are traced arrays of the same shape; average along the last axis."""
    # Your code here: x[mask] cannot be traced (its size depends on the values); use a masked sum instead.
    return jnp.mean(x, axis=-1)
