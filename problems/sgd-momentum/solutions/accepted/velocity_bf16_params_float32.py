# Accepted: the new velocity in the leaf's dtype, the parameter step in float32 and cast back.
import jax
import jax.numpy as jnp


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    new_velocity = jax.tree.map(lambda v, g: g + v * momentum, velocity, grads)

    def step(p, v):
        return (p.astype(jnp.float32) - learning_rate * v.astype(jnp.float32)).astype(p.dtype)

    return jax.tree.map(step, params, new_velocity), new_velocity
