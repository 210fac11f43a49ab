"""Mistake: Floor instead of round

Rounds down (floor) instead of to the nearest integer; the gradient is right.
"""
import jax
import jax.numpy as jnp


def ste_round(x):
    return jax.tree.map(lambda v: v + jax.lax.stop_gradient(jnp.floor(v) - v), x)
