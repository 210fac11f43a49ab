# Accepted: norm from jnp.vdot of each float32 leaf with itself, scale chosen with jax.lax.cond.
import jax
import jax.numpy as jnp
from jax import lax


def clip_by_global_norm(grads, max_norm):
    sq = [jnp.vdot(x, x) for x in (leaf.astype(jnp.float32) for leaf in jax.tree_util.tree_leaves(grads))]
    norm = jnp.sqrt(jnp.sum(jnp.stack(sq)))
    scale = lax.cond(
        norm > max_norm,
        lambda: (max_norm / norm).astype(jnp.float32),
        lambda: jnp.ones((), jnp.float32),
    )

    def apply(g):
        return (g.astype(jnp.float32) * scale).astype(g.dtype)

    return {"clipped": jax.tree_util.tree_map(apply, grads), "global_norm": norm}
