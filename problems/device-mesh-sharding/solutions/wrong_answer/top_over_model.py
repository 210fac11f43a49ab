"""Mistake: top split over the model axis

`top` has one entry per row of `y`, and the rows belong to `data`: `P("data")`. `P("model")` cuts it in
two halves held by other devices than the rows they come from.
"""
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P


def shard_activations(x, w):
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    y = jax.lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("data", "model")))
    top = jax.lax.with_sharding_constraint(y.max(axis=1), NamedSharding(mesh, P("model")))
    return {"y": y, "top": top}
