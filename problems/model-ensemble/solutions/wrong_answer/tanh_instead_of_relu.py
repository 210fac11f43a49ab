"""Mistake: tanh instead of ReLU

The hidden layer uses jnp.tanh. The network's activation is the ReLU, max(0, .): jax.nn.relu.
"""
import jax
import jax.numpy as jnp


def _predict(member, x):
    return jnp.tanh(x @ member["w1"] + member["b1"]) @ member["w2"] + member["b2"]


def ensemble_predict(params, x):
    return jax.vmap(_predict, in_axes=(0, None))(params, x)
