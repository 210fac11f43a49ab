"""A Python if on a traced value (fails under jax.jit)."""
import jax


def linear_recurrence(a, b):
    if (a == 0).any():
        b = b * 1.0

    def combine(first, second):
        return second[0] * first[0], second[0] * first[1] + second[1]

    return jax.lax.associative_scan(combine, (a, b))[1]
