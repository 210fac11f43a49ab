"""Mistake: Backward clips the cotangent

The backward rule clips the incoming cotangent to [-2, 2] ("to keep gradients safe"): values right, but a
large cotangent comes back clipped instead of unchanged.
"""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def round_ste(x):
    return jnp.round(x)


def round_fwd(x):
    return jnp.round(x), None


def round_bwd(_, g):
    return (jnp.clip(g, -2.0, 2.0),)


round_ste.defvjp(round_fwd, round_bwd)


def ste_round(x):
    return jax.tree.map(round_ste, x)
