"""Mistake: Backward returns ones

The backward rule returns ones instead of the incoming cotangent: right only when the cotangent is ones.
"""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def round_ste(x):
    return jnp.round(x)


def round_fwd(x):
    return jnp.round(x), x


def round_bwd(x, g):
    return (jnp.ones_like(x),)


round_ste.defvjp(round_fwd, round_bwd)


def ste_round(x):
    return jax.tree.map(round_ste, x)
