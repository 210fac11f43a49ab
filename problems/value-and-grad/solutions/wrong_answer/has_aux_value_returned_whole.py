"""Mistake: With has_aux=True, returns the (loss, aux) pair as the loss

jax.value_and_grad(f, has_aux=True) returns ((loss, aux), grads). Returning its first element as the loss
returns the pair: unpack it, (loss, aux), grads = ..., and return (loss, grads).
"""
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    prediction = x @ params["w"] + params["b"]
    return 0.5 * jnp.sum((prediction - y) ** 2) / x.shape[0], prediction


def loss_and_grad(params, x, y):
    value, grads = jax.value_and_grad(_loss, has_aux=True)(params, x, y)
    return value, grads
