# Accepted: flatten all three trees, update the leaf lists with zip, unflatten with the params treedef.
from jax.tree_util import tree_flatten, tree_leaves, tree_unflatten


def sgd_momentum(params, grads, velocity, learning_rate, momentum):
    p_leaves, treedef = tree_flatten(params)
    g_leaves = tree_leaves(grads)
    v_leaves = tree_leaves(velocity)
    new_p, new_v = [], []
    for p, g, v in zip(p_leaves, g_leaves, v_leaves, strict=True):
        v_next = momentum * v + g
        new_v.append(v_next)
        new_p.append(p - learning_rate * v_next)
    return tree_unflatten(treedef, new_p), tree_unflatten(treedef, new_v)
