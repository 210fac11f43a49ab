"""A jax.lax.while_loop carrying the step count beside the product, with jnp.matmul."""
import jax
import jax.numpy as jnp


def matrix_power(a, k):
    def cond(state):
        return state[0] < k

    def body(state):
        t, p = state
        return t + 1, jnp.matmul(p, a)

    _, p = jax.lax.while_loop(cond, body, (0, jnp.eye(a.shape[0], dtype=a.dtype)))
    return p
