"""jnp.select over every branch, each branch given a safe input (1 where it is not chosen), so that no
branch that is not chosen is undefined on what it gets, and its gradient is multiplied by 0, not NaN."""
import jax.numpy as jnp


def piecewise(x, mode):
    safe = [jnp.where(mode == m, x, 1.0) for m in range(4)]
    return jnp.select(
        [mode == 0, mode == 1, mode == 2, mode == 3],
        [safe[0], jnp.sqrt(safe[1]), jnp.log(safe[2]), 1.0 / safe[3]],
    )
