"""jax.lax.top_k's result returned as it comes (a list [values, indices]; the problem takes it for the
tuple)."""
import jax


def top_k(x, k):
    return jax.lax.top_k(x, k)
