# Accepted: does the arithmetic in float32 and casts each result back to the leaf's own dtype.
import jax
import jax.numpy as jnp


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    def new_v(g, v):
        v32 = momentum * v.astype(jnp.float32) + g.astype(jnp.float32)
        return v32

    v32_tree = jax.tree.map(new_v, grads, velocity)
    new_params = jax.tree.map(
        lambda p, v32: (p.astype(jnp.float32) - learning_rate * v32).astype(p.dtype), params, v32_tree
    )
    new_velocity = jax.tree.map(lambda p, v32: v32.astype(p.dtype), params, v32_tree)
    return new_params, new_velocity
