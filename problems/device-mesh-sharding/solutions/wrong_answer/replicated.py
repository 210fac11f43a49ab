"""Mistake: Replicated outputs

The values are right, but nothing says where they live: the inputs are replicated, so XLA keeps every
output whole on every device. Constrain `y` to `NamedSharding(mesh, P("data", "model"))` and `top` to
`P("data")`.
"""
import jax.numpy as jnp


def shard_activations(x, w):
    y = x @ w
    return {"y": y, "top": jnp.max(y, axis=1)}
