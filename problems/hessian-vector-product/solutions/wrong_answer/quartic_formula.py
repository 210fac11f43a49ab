"""Mistake: Quartic formula

Ignores f and uses the quartic's Hessian (3 x^2 v) for every function: right only when f is quartic.
"""
import jax


def hvp(f, x, v):
    return jax.tree.map(lambda a, b: 3 * a * a * b, x, v)
