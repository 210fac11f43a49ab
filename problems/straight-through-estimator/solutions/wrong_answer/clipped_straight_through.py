"""Mistake: Clipped straight through

A clipped estimator: passes the gradient only where |x| <= 1, which is another method than the one asked.
"""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def round_ste(x):
    return jnp.round(x)


def round_fwd(x):
    return jnp.round(x), x


def round_bwd(x, g):
    return (jnp.where(jnp.abs(x) <= 1, g, jnp.zeros_like(g)),)


round_ste.defvjp(round_fwd, round_bwd)


def ste_round(x):
    return jax.tree.map(round_ste, x)
