"""Mistake: Forms the Hessian with jax.hessian

Flattens x, builds the n x n Hessian with jax.hessian and multiplies it by v. The numbers are right, but
the matrix has n^2 entries and costs about n gradients, hundreds of times the reference's FLOPs on the
larger cases: take the jvp of jax.grad(f) at x in the direction v instead, which never forms H.
"""
import jax
from jax.flatten_util import ravel_pytree


def hvp(f, x, v):
    flat_x, unravel = ravel_pytree(x)
    flat_v, _ = ravel_pytree(v)
    hessian = jax.hessian(lambda y: f(unravel(y)))(flat_x)
    return unravel(hessian @ flat_v)
