"""Mistake: Cumulative product closed form

h_t = P_t * sum_{s <= t} b_s / P_s with P_t the cumulative product of a is right on paper, but it
divides by P_s, which is 0 once some a is 0 (and tiny long before): NaN and infinities. Compose the
steps instead: (a2 * a1, a2 * b1 + b2) never divides.
"""
import jax.numpy as jnp


def linear_recurrence(a, b):
    p = jnp.cumprod(a, axis=0)
    return p * jnp.cumsum(b / p, axis=0)
