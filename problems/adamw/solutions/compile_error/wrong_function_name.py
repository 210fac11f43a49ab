# Compile error: the function is named adam_w, not adamw.
import jax


def adam_w(params, grads, mu, nu, step, learning_rate, weight_decay):
    return params, mu, nu
