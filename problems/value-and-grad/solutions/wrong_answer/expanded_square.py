"""Mistake: Expands the square before summing

sum(yhat ** 2) - 2 * sum(yhat * y) + sum(y ** 2) is the squared error in exact arithmetic, but in float32
each of the three sums rounds at the size of the predictions' squares: near a perfect fit the loss is
their small difference and the rounding is all that is left. Square the residual: jnp.sum((yhat - y) ** 2).
"""
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    prediction = x @ params["w"] + params["b"]
    expanded = jnp.sum(prediction**2) - 2.0 * jnp.sum(prediction * y) + jnp.sum(y**2)
    return 0.5 * expanded / x.shape[0]


def loss_and_grad(params, x, y):
    return jax.value_and_grad(_loss)(params, x, y)
