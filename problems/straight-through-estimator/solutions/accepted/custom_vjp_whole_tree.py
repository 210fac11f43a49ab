# One jax.custom_vjp over the whole pytree: the backward rule hands back the cotangent tree unchanged.
import jax
import jax.numpy as jnp


@jax.custom_vjp
def ste_round(x):
    return jax.tree.map(jnp.round, x)


def _fwd(x):
    return ste_round(x), None


def _bwd(_, g):
    return (g,)


ste_round.defvjp(_fwd, _bwd)
