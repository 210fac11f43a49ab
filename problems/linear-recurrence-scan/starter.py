import jax
import jax.numpy as jnp


def linear_recurrence(a, b):
    """Runs inside jax.jit: a and b are traced arrays with time on axis 0."""
    # Your code here: this scan adds the b's up and ignores a. Scan over (a, b) pairs instead, with a
    # function that composes two steps.
    return jax.lax.associative_scan(jnp.add, b)
