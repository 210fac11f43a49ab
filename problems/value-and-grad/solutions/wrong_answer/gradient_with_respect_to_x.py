"""Mistake: Differentiates with respect to x

argnums=1 asks for the gradient with respect to the inputs x, an (n, d) array. The gradient asked for is
with respect to params, the first argument: the default argnums=0.
"""
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    return 0.5 * jnp.sum((x @ params["w"] + params["b"] - y) ** 2) / x.shape[0]


def loss_and_grad(params, x, y):
    return jax.value_and_grad(_loss, argnums=1)(params, x, y)
