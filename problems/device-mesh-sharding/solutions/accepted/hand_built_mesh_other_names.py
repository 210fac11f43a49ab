"""Accepted: a `Mesh` built by hand from `jax.devices()`, axes named "rows" and "cols".

The layout is what is judged, not the names: a (4, 2) grid of the devices in order, rows of `y` over the
first axis and columns over the second, is the placement the statement asks for.
"""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def shard_activations(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("rows", "cols"))
    out = {"y": x @ w}
    out["top"] = out["y"].max(axis=1)
    specs = {"y": P("rows", "cols"), "top": P("rows")}
    return jax.tree.map(lambda v, s: jax.lax.with_sharding_constraint(v, NamedSharding(mesh, s)), out, specs)
