"""Mistake: Divides the loss by n after differentiating

Takes value_and_grad of the summed loss and divides only the value by n, so the gradient stays n times
too large. Put the division inside the function you differentiate: value and gradient then agree.
"""
import jax
import jax.numpy as jnp


def _summed_loss(params, x, y):
    return 0.5 * jnp.sum((x @ params["w"] + params["b"] - y) ** 2)


def loss_and_grad(params, x, y):
    loss, grads = jax.value_and_grad(_summed_loss)(params, x, y)
    return loss / x.shape[0], grads
