# Compile error: a syntax error (an unclosed bracket), so the module cannot be loaded.
import jax
from jax.sharding import NamedSharding, PartitionSpec as P


def shard_activations(x, w):
    mesh = jax.make_mesh((4, 2), ("data", "model"))
    y = jax.sharding.reshard(x @ w, NamedSharding(mesh, P("data", "model"))
    return {"y": y, "top": y.max(axis=1)}
