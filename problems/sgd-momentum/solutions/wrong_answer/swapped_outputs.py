"""Mistake: Swapped outputs

Returns (new_velocity, new_params), the two results in the wrong order.
"""
import jax


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - learning_rate * v, params, new_velocity)
    return new_velocity, new_params
