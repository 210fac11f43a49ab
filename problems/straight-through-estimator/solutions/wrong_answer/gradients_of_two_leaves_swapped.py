"""Mistake: Gradients of two leaves swapped

The gradient is computed for the whole tree at once and handed back in reversed leaf order: right when every
leaf gets the same cotangent, wrong when two leaves of one shape get different ones.
"""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def round_leaves(leaves):
    return [jnp.round(leaf) for leaf in leaves]


def round_fwd(leaves):
    return round_leaves(leaves), [leaf.shape for leaf in leaves]


def round_bwd(shapes, gs):
    by_shape = {}
    for g in gs:
        by_shape.setdefault((g.shape, g.dtype), []).append(g)
    return ([by_shape[(g.shape, g.dtype)].pop() for g in gs],)


round_leaves.defvjp(round_fwd, round_bwd)


def ste_round(x):
    leaves, treedef = jax.tree.flatten(x)
    return jax.tree.unflatten(treedef, round_leaves(leaves))
