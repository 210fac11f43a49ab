"""Mistake: Float32 no cast back

Computes in float32 for accuracy but never casts back, so bfloat16 leaves become float32.
"""
import jax
import jax.numpy as jnp


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    new_velocity = jax.tree.map(
        lambda v, g: momentum * v.astype(jnp.float32) + g.astype(jnp.float32), velocity, grads
    )
    new_params = jax.tree.map(lambda p, v: p.astype(jnp.float32) - learning_rate * v, params, new_velocity)
    return new_params, new_velocity
