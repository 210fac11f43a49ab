"""Mistake: Returns list

Returns the list [new_params, new_velocity] instead of a tuple.
"""
import jax


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - learning_rate * v, params, new_velocity)
    return [new_params, new_velocity]
