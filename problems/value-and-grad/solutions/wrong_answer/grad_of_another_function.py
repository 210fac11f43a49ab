"""Mistake: jax.grad called, but the gradient returned is hand-written

Calls jax.grad on a different function (the sum of the parameters) beside a gradient written out by hand,
and returns the hand-written one. The gradient returned must be autodiff of the loss itself:
jax.value_and_grad(loss)(params, x, y).
"""
import jax
import jax.numpy as jnp


def loss_and_grad(params, x, y):
    n = x.shape[0]
    touched = jax.grad(lambda p: sum(jnp.sum(leaf) for leaf in jax.tree.leaves(p)))(params)
    residual = x @ params["w"] + params["b"] - y
    loss = 0.5 * jnp.sum(residual**2) / n
    grads = {"w": x.T @ residual / n, "b": jnp.sum(residual, axis=0) / n}
    return loss, jax.tree.map(lambda g, t: g + 0.0 * t, grads, touched)
