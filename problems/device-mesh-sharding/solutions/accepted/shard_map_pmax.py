"""Accepted: `jax.shard_map`, the program of one device's blocks, with `pmax` across `model`.

Each device multiplies its B rows of `x` by its H columns of `w` (its block of `y`) and takes the maximum
of its half of each row; `jax.lax.pmax` over `model` combines the two halves, so both devices of a `data`
row hold the same `top` block, which `out_specs` `P("data")` declares.
"""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P


def shard_activations(x, w):
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))

    def block(x_rows, w_columns):
        y_block = x_rows @ w_columns
        return y_block, jax.lax.pmax(jnp.max(y_block, axis=1), "model")

    y, top = jax.shard_map(
        block,
        mesh=mesh,
        in_specs=(P("data", None), P(None, "model")),
        out_specs=(P("data", "model"), P("data")),
    )(x, w)
    return {"y": y, "top": top}
