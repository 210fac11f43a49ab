"""Mistake: Branches out of order

The branch list has the log before the square root: jax.lax.switch picks by position, so mode 1 takes
the log and mode 2 the square root. List them in the table's order: identity, sqrt, log, reciprocal.
"""
import jax
import jax.numpy as jnp


def piecewise(x, mode):
    return jax.lax.switch(mode, [lambda v: v, jnp.log, jnp.sqrt, jnp.reciprocal], x)
