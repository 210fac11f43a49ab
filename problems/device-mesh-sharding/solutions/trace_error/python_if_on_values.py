# Trace error: a Python `if` on a traced value (TracerBoolConversionError under jax.jit).
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P


def shard_activations(x, w):
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    y = jax.lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("data", "model")))
    if jnp.all(y <= 0):
        top = jnp.zeros(y.shape[0])
    else:
        top = y.max(axis=1)
    return {"y": y, "top": jax.lax.with_sharding_constraint(top, NamedSharding(mesh, P("data")))}
