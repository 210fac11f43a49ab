# Time limit: a Python loop meant to run "until converged" that never ends while the function is traced.
import jax


def hvp(f, x, v):
    steps = 0
    while steps >= 0:
        steps += 1
    return jax.jvp(jax.grad(f), (x,), (v,))[1]
