"""Mistake: Product taken in bfloat16

Casting the inputs to bfloat16 "to save bandwidth" rounds them to 8 significant bits, far outside the
float32 tolerance. Multiply the float32 inputs as they arrive.
"""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P


def shard_activations(x, w):
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    y = (x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)).astype(jnp.float32)
    y = jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P("data", "model")))
    top = jax.lax.with_sharding_constraint(y.max(axis=1), NamedSharding(mesh, P("data")))
    return {"y": y, "top": top}
