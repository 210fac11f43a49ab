# Trace error: a Python `if` on the traced momentum (TracerBoolConversionError under jax.jit).
import jax


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    if momentum > 0:
        new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    else:
        new_velocity = grads
    new_params = jax.tree.map(lambda p, v: p - learning_rate * v, params, new_velocity)
    return new_params, new_velocity
