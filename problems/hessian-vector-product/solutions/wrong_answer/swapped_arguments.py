"""Mistake: Swapped arguments

Differentiates at v in the direction x: H(v) x instead of H(x) v.
"""
import jax


def hvp(f, x, v):
    return jax.jvp(jax.grad(f), (v,), (x,))[1]
