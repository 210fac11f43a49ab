"""Mistake: Composition in the wrong order

The combine applies the later step first: (a1 * a2, a1 * b2 + b1). Composition of affine maps is not
commutative: the earlier step (first argument) is applied first, a2 * (a1 h + b1) + b2.
"""
import jax


def linear_recurrence(a, b):
    def combine(first, second):
        a1, b1 = first
        a2, b2 = second
        return a1 * a2, a1 * b2 + b1

    return jax.lax.associative_scan(combine, (a, b))[1]
