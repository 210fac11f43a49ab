"""Mistake: Builds the Hessian column by column with vmap

A jax.vmap of the jvp of the gradient over the n basis vectors gives every column of H, then H @ v. Each
column is one Hessian-vector product, so this does n of them to get the one you need: pass v itself as
the tangent, jax.jvp(jax.grad(f), (x,), (v,))[1], and the cost rule is met.
"""
import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree


def hvp(f, x, v):
    flat_x, unravel = ravel_pytree(x)
    flat_v, _ = ravel_pytree(v)
    grad = jax.grad(lambda y: f(unravel(y)))
    column = lambda e: jax.jvp(grad, (flat_x,), (e,))[1]
    hessian = jax.vmap(column)(jnp.eye(flat_x.size, dtype=flat_x.dtype))
    return unravel(hessian @ flat_v)
