# Accepted: tree_flatten / tree_unflatten, jnp.where with a guarded denominator.
import jax
import jax.numpy as jnp
from jax.tree_util import tree_flatten, tree_unflatten


def clip_by_global_norm(grads, max_norm):
    leaves, treedef = tree_flatten(grads)
    total = jnp.float32(0.0)
    for leaf in leaves:
        x = leaf.astype(jnp.float32)
        total = total + jnp.sum(x * x)
    norm = jnp.sqrt(total)
    over = norm > max_norm
    scale = jnp.where(over, max_norm / jnp.where(over, norm, 1.0), 1.0)
    out = [(leaf.astype(jnp.float32) * scale).astype(leaf.dtype) for leaf in leaves]
    return {"clipped": tree_unflatten(treedef, out), "global_norm": norm}
