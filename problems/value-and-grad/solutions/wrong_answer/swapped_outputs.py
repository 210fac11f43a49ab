"""Mistake: Returns (grads, loss)

The tuple is in the wrong order. jax.value_and_grad returns (value, gradient), and so must this function:
(loss, grads).
"""
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    return 0.5 * jnp.sum((x @ params["w"] + params["b"] - y) ** 2) / x.shape[0]


def loss_and_grad(params, x, y):
    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    return grads, loss
