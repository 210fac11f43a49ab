import jax
import jax.numpy as jnp


def isqrt(n):
    """Runs inside jax.jit: n is a traced int32 array. Return (root, steps), both int32 of n's shape."""
    root = n
    steps = jnp.zeros_like(n)
    # Your code here: Newton's method in a jax.lax.while_loop.
    return root, steps
