# Accepted: the loss computed on its own, and jax.grad of the same loss function for the gradient.
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    residual = x @ params["w"] + params["b"] - y
    return jnp.sum(residual**2) / (2 * x.shape[0])


def loss_and_grad(params, x, y):
    return _loss(params, x, y), jax.grad(_loss)(params, x, y)
