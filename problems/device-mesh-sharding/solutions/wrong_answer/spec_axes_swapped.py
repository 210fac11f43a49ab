"""Mistake: Mesh axes swapped in the spec of y

`P("model", "data")` splits the rows of `y` over `model` (2 devices) and its columns over `data` (4): each
entry of a `PartitionSpec` is one dimension of the array, in order, so rows come first: `P("data", "model")`.
"""
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P


def shard_activations(x, w):
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    y = jax.lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("model", "data")))
    top = jax.lax.with_sharding_constraint(y.max(axis=1), NamedSharding(mesh, P("data")))
    return {"y": y, "top": top}
