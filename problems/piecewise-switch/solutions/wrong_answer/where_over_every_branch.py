"""Mistake: where over every branch

jnp.where picks the right values, but every branch is computed and differentiated on every entry: the
square root and log of a negative number or zero have NaN derivatives, and 0 times NaN is NaN, so the
gradient is NaN. Use jax.lax.switch, which runs only the chosen branch, or give each branch a safe
input first.
"""
import jax.numpy as jnp


def piecewise(x, mode):
    return jnp.where(
        mode == 0,
        x,
        jnp.where(mode == 1, jnp.sqrt(x), jnp.where(mode == 2, jnp.log(x), 1.0 / x)),
    )
