"""Mistake: Gradient written out by hand

The formulas X^T R / n and mean(R) give the right values, but the problem asks for the gradient from JAX's
autodiff: write the loss as a function of params and call jax.value_and_grad on it.
"""
import jax.numpy as jnp


def loss_and_grad(params, x, y):
    n = x.shape[0]
    residual = x @ params["w"] + params["b"] - y
    loss = 0.5 * jnp.sum(residual**2) / n
    return loss, {"w": x.T @ residual / n, "b": jnp.sum(residual, axis=0) / n}
