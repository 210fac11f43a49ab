import jax
import jax.numpy as jnp


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    """One SGD-with-momentum step over pytrees of identical structure.

    new_velocity = momentum * velocity + grads;  new_params = params - learning_rate * new_velocity
    Runs inside jax.jit with every argument traced. Leave the inputs unchanged.
    Return the tuple (new_params, new_velocity), both shaped like params, leaf dtypes unchanged.
    """
    # TODO: jax.tree.map(f, a, b) calls f(leaf_a, leaf_b) for matching leaves and rebuilds the tree.
    new_velocity = jax.tree.map(jnp.zeros_like, velocity)
    new_params = jax.tree.map(jnp.copy, params)
    return new_params, new_velocity
