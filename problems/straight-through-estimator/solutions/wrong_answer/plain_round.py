"""Mistake: Plain round

No custom gradient: every value is right, but the gradient of rounding is zero, not the identity.
"""
import jax
import jax.numpy as jnp


def ste_round(x):
    return jax.tree.map(jnp.round, x)
