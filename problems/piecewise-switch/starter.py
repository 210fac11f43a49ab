import jax
import jax.numpy as jnp


def piecewise(x, mode):
    """Runs inside jax.jit: x is a traced float array, mode a traced int32 scalar (0 to 3)."""
    branches = [lambda v: v, jnp.sqrt, jnp.log, jnp.reciprocal]
    # Your code here: apply the branch that mode selects.
    return branches[0](x)
