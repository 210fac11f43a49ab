# Accepted: one tree_map over three trees returning (p, v) pairs, split again with is_leaf=tuple.
import jax.numpy as jnp
from jax.tree_util import tree_map


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    def step(p, g, v):
        v_next = jnp.add(jnp.multiply(momentum, v), g)
        return (p - learning_rate * v_next, v_next)

    pairs = tree_map(step, params, grads, velocity)
    is_pair = lambda x: isinstance(x, tuple)  # noqa: E731
    new_params = tree_map(lambda pair: pair[0], pairs, is_leaf=is_pair)
    new_velocity = tree_map(lambda pair: pair[1], pairs, is_leaf=is_pair)
    return new_params, new_velocity
