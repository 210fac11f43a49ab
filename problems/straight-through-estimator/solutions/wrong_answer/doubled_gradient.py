"""Mistake: Doubled gradient

The backward rule scales the cotangent (by 2, "to make up for the rounding"): values right, gradient 2x.
"""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def round_ste(x):
    return jnp.round(x)


def round_fwd(x):
    return jnp.round(x), None


def round_bwd(_, g):
    return (2 * g,)


round_ste.defvjp(round_fwd, round_bwd)


def ste_round(x):
    return jax.tree.map(round_ste, x)
