"""Mistake: Gradient not product

Returns the gradient of f at x: the first derivative, not the Hessian times v.
"""
import jax


def hvp(f, x, v):
    return jax.grad(f)(x)
