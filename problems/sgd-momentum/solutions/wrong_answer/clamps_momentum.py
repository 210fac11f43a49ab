"""Mistake: Clamps momentum

Clamps momentum to at most 0.9 "for stability", which changes every step with a larger momentum.
"""
import jax
import jax.numpy as jnp


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    mu = jnp.minimum(momentum, 0.9)
    new_velocity = jax.tree.map(lambda v, g: mu * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - learning_rate * v, params, new_velocity)
    return new_params, new_velocity
