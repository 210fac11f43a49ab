"""jax.lax.div (truncating, the same as floor for non-negative numbers) and a right shift for the halving."""
import jax
import jax.numpy as jnp


def isqrt(n):
    divisor = jnp.where(n > 1, n, 1)

    def body(state):
        y, steps, active = state
        z = jax.lax.shift_right_logical(y + jax.lax.div(divisor, y), jnp.int32(1))
        step = jnp.logical_and(active, z < y)
        return jnp.where(step, z, y), jnp.where(step, steps + 1, steps), step

    y, steps, _ = jax.lax.while_loop(lambda s: s[2].any(), body, (divisor, jnp.zeros_like(n), n > 1))
    return jnp.where(n > 1, y, n), steps
