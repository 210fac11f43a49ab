"""Mistake: Bfloat16 three percent off

Bfloat16 results come back 3% too large (float32 ones are right): a systematic error that the bfloat16
tolerance must reject although every single element is only a few ulps off.
"""
import jax
import jax.numpy as jnp


def _off(x):
    return (x.astype(jnp.float32) * 1.03).astype(x.dtype) if x.dtype == jnp.bfloat16 else x


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - learning_rate * v, params, new_velocity)
    return jax.tree.map(_off, new_params), jax.tree.map(_off, new_velocity)
