# Trace error: np.array() on traced leaves (TracerArrayConversionError under jax.jit).
import jax
import jax.numpy as jnp
import numpy as np


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    def step(p, g, v):
        v_new = momentum * np.array(v) + np.array(g)
        return jnp.asarray(np.array(p) - learning_rate * v_new)

    new_params = jax.tree.map(step, params, grads, velocity)
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    return new_params, new_velocity
