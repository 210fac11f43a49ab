"""Mistake: Stops when the first element stops

The loop's condition looks at the first element only, so the loop ends as soon as it has converged and
the other elements stop wherever they are. Loop while any element is still active: jnp.any(active).
"""
import jax
import jax.numpy as jnp


def isqrt(n):
    safe = jnp.maximum(n, 1)

    def body(state):
        y, steps, active = state
        z = (y + safe // y) // 2
        better = active & (z < y)
        return jnp.where(better, z, y), steps + better.astype(jnp.int32), better

    def cond(state):
        return state[2].reshape(-1)[:1].any()

    y, steps, _ = jax.lax.while_loop(cond, body, (safe, jnp.zeros_like(n), n > 1))
    return jnp.where(n > 1, y, n), steps
