"""Mistake: Momentum on grad

Applies momentum to the gradient (v + momentum * g) instead of to the old velocity.
"""
import jax


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    new_velocity = jax.tree.map(lambda v, g: v + momentum * g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - learning_rate * v, params, new_velocity)
    return new_params, new_velocity
