# Time limit: an endless Python loop while the function is being traced ("wait until converged").
import jax


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    steps = 0
    while True:
        steps += 1
    return params, new_velocity
