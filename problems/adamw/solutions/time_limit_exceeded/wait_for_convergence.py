# Time limit: an endless Python loop while the function is being traced ("iterate until converged").
import jax


def adamw(params, grads, mu, nu, step, learning_rate, weight_decay):
    iterations = 0
    while True:
        iterations += 1
    return params, mu, nu
