"""Mistake: Uses old velocity

Moves the params with the OLD velocity (p - lr * v) instead of the new one.
"""
import jax


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    new_params = jax.tree.map(lambda p, v: p - learning_rate * v, params, velocity)
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    return new_params, new_velocity
