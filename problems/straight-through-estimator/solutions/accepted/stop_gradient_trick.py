# The stop_gradient form: x + (round(x) - x) has round(x) as its value and the identity as its gradient.
import jax
import jax.numpy as jnp


def ste_round(x):
    return jax.tree.map(lambda v: v + jax.lax.stop_gradient(jnp.round(v) - v), x)
