# Runtime error: `jax.make_mesh` without `axis_types` makes Explicit axes, and `with_sharding_constraint`
# refuses a spec over them (ValueError while tracing): pass Auto axis types, or use `jax.sharding.reshard`.
import jax
from jax.sharding import NamedSharding, PartitionSpec as P


def shard_activations(x, w):
    mesh = jax.make_mesh((4, 2), ("data", "model"))
    y = jax.lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("data", "model")))
    top = jax.lax.with_sharding_constraint(y.max(axis=1), NamedSharding(mesh, P("data")))
    return {"y": y, "top": top}
