# Trace error: a Python `if` on the loss, a traced value with no concrete truth value under jax.jit.
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    return 0.5 * jnp.sum((x @ params["w"] + params["b"] - y) ** 2) / x.shape[0]


def loss_and_grad(params, x, y):
    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    if loss == 0:
        grads = jax.tree.map(jnp.zeros_like, grads)
    return loss, grads
