"""Mistake: top computed from an unsharded product

`y` is constrained, but `top` is taken from a second `x @ w` that nothing constrains: it is computed from
the replicated inputs and stays replicated. Take the maximum of the sharded `y` (or constrain `top`).
"""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P


def shard_activations(x, w):
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    y = jax.lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("data", "model")))
    return {"y": y, "top": jnp.max(x @ w, axis=1)}
