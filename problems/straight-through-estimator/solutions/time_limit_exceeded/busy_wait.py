# Time limit: an endless Python loop while the function is being traced.
import jax
import jax.numpy as jnp


def ste_round(x):
    rounds = 0
    while rounds >= 0:
        rounds += 1
    return jax.tree.map(jnp.round, x)
