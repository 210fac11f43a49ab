# Compile error: the function is named value_and_grad, not loss_and_grad.
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    return 0.5 * jnp.sum((x @ params["w"] + params["b"] - y) ** 2) / x.shape[0]


def value_and_grad(params, x, y):
    return jax.value_and_grad(_loss)(params, x, y)
