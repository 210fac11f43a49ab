"""associative_scan with reverse=True on time-reversed inputs, reversed back: the same prefixes."""
import jax


def linear_recurrence(a, b):
    def combine(later, earlier):
        a2, b2 = later
        a1, b1 = earlier
        return a2 * a1, a2 * b1 + b2

    _, h = jax.lax.associative_scan(combine, (a[::-1], b[::-1]), reverse=True)
    return h[::-1]
