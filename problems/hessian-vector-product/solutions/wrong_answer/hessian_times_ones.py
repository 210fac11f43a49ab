"""Mistake: Hessian times ones

Differentiates the sum of the gradient: H(x) times a vector of ones, whatever v is.
"""
import jax
import jax.numpy as jnp


def hvp(f, x, v):
    total = lambda y: sum(jnp.sum(g) for g in jax.tree.leaves(jax.grad(f)(y)))
    return jax.grad(total)(x)
