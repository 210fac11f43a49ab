"""Mistake: A (2, 4) mesh

The mesh has 4 devices along `data` and 2 along `model`: `jax.make_mesh((4, 2), ("data", "model"))`. A
(2, 4) mesh with the same names cuts the rows in 2 blocks and the columns in 4, on other devices.
"""
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P


def shard_activations(x, w):
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    y = jax.lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("data", "model")))
    top = jax.lax.with_sharding_constraint(y.max(axis=1), NamedSharding(mesh, P("data")))
    return {"y": y, "top": top}
