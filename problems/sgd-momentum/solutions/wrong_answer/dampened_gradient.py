"""Mistake: Dampened gradient

Uses the "dampened" form v = momentum * v + (1 - momentum) * g, which is not the stated rule.
"""
import jax


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v + (1.0 - momentum) * g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - learning_rate * v, params, new_velocity)
    return new_params, new_velocity
