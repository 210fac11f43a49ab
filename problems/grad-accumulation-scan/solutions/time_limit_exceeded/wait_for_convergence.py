# Time limit: a Python loop "until the loss stops changing" whose condition never becomes true while tracing.
import jax
import jax.numpy as jnp


def accumulate_gradients(params, xs, target):
    grads = jax.tree.map(jnp.zeros_like, params)
    previous, steps = None, 0
    while previous is None or steps >= 0:
        previous = steps
        steps += 1
    return jnp.zeros((), jnp.float32), grads
