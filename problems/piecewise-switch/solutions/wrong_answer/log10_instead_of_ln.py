"""Mistake: Base-10 logarithm

jnp.log10 is the base-10 logarithm; ln is the natural one, jnp.log.
"""
import jax
import jax.numpy as jnp


def piecewise(x, mode):
    return jax.lax.switch(mode, [lambda v: v, jnp.sqrt, jnp.log10, jnp.reciprocal], x)
