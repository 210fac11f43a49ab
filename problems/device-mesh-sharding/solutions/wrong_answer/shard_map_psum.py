"""Mistake: Halves combined with psum

`jax.lax.psum` adds the two devices' maxima: the maximum of a row is the larger of its halves' maxima,
`jax.lax.pmax(..., "model")`.
"""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P


def shard_activations(x, w):
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))

    def block(x_rows, w_columns):
        y_block = x_rows @ w_columns
        return y_block, jax.lax.psum(jnp.max(y_block, axis=1), "model")

    y, top = jax.shard_map(
        block,
        mesh=mesh,
        in_specs=(P("data", None), P(None, "model")),
        out_specs=(P("data", "model"), P("data")),
    )(x, w)
    return {"y": y, "top": top}
