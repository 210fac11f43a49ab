# Trace error: float() on the traced learning_rate (ConcretizationTypeError under jax.jit).
import jax


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    lr, mu = float(learning_rate), float(momentum)
    new_velocity = jax.tree.map(lambda v, g: mu * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - lr * v, params, new_velocity)
    return new_params, new_velocity
