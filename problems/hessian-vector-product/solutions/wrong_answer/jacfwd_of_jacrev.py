"""Mistake: Forms the Hessian blocks with jacfwd of jacrev

jax.jacfwd(jax.jacrev(f)) on the pytree gives one Hessian block per pair of leaves, each contracted with
v here. The values are right, but every block is built in full (n^2 numbers for n coordinates), far over
the cost rule on the larger cases: differentiate the gradient in the direction v (jax.jvp of jax.grad(f)).
"""
import jax
import jax.numpy as jnp


def hvp(f, x, v):
    blocks = jax.jacfwd(jax.jacrev(f))(x)  # blocks[i][j] has shape x_i.shape + x_j.shape
    v_leaves, treedef = jax.tree.flatten(v)
    rows = treedef.flatten_up_to(blocks)
    out = []
    for row, x_leaf in zip(rows, jax.tree.leaves(x)):
        total = jnp.zeros(x_leaf.shape, x_leaf.dtype)
        for block, v_leaf in zip(treedef.flatten_up_to(row), v_leaves):
            total = total + jnp.tensordot(block, v_leaf, axes=v_leaf.ndim)
        out.append(total)
    return jax.tree.unflatten(treedef, out)
