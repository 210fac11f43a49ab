"""Mistake: Another menu function

Reaches into f's module for another menu function (soft_norm) instead of the f it was given.
"""
import jax


def hvp(f, x, v):
    other = f.__globals__.get("soft_norm", f)
    return jax.jvp(jax.grad(other), (x,), (v,))[1]
