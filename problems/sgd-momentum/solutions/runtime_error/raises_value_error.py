# Runtime error: raises ValueError for any tree that is not a flat dict (example 2 nests a dict).
import jax


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    for value in params.values():
        if isinstance(value, (dict, list)):
            raise ValueError("nested parameters are not supported")
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - learning_rate * v, params, new_velocity)
    return new_params, new_velocity
