"""Mistake: Finite difference

A forward finite difference of the gradient: an approximation, far outside a float32 tolerance.
"""
import jax


def hvp(f, x, v):
    eps = 1e-3
    shifted = jax.tree.map(lambda a, b: a + eps * b, x, v)
    return jax.tree.map(lambda a, b: (a - b) / eps, jax.grad(f)(shifted), jax.grad(f)(x))
