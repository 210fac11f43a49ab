"""Mistake: Float32 learning rate

Jnp.float32(...) makes the scalars strongly typed, so bfloat16 leaves promote to float32.
"""
import jax
import jax.numpy as jnp


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    lr = jnp.float32(learning_rate)
    mu = jnp.float32(momentum)
    new_velocity = jax.tree.map(lambda v, g: mu * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - lr * v, params, new_velocity)
    return new_params, new_velocity
