"""Mistake: Dict update on velocity

Correct values, but velocity.update(...) changes the caller's top-level dict.
"""
import jax


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - learning_rate * v, params, new_velocity)
    if isinstance(velocity, dict):
        velocity.update(new_velocity)  # "save" the velocity for the next step
    return new_params, new_velocity
