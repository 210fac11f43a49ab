# Accepted: optax-style "trace" transform written out: updates = -lr * trace, then apply_updates.
import jax
import jax.numpy as jnp


def _trace(grads, velocity, decay):
    return jax.tree.map(lambda g, t: g + decay * t, grads, velocity)


def _apply_updates(params, updates):
    return jax.tree.map(lambda p, u: jnp.asarray(p + u).astype(jnp.asarray(p).dtype), params, updates)


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    new_trace = _trace(grads, velocity, momentum)
    updates = jax.tree.map(lambda t: -learning_rate * t, new_trace)
    return _apply_updates(params, updates), new_trace
