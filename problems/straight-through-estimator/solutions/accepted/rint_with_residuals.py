# jnp.rint (also ties to even) with a forward rule that saves a residual it does not need.
import jax
import jax.numpy as jnp


@jax.custom_vjp
def _q(v):
    return jnp.rint(v)


def _q_fwd(v):
    return jnp.rint(v), v.shape


def _q_bwd(shape, g):
    return (g.reshape(shape),)


_q.defvjp(_q_fwd, _q_bwd)


def ste_round(x):
    leaves, treedef = jax.tree.flatten(x)
    return jax.tree.unflatten(treedef, [_q(leaf) for leaf in leaves])
