# Compile error: an indentation error, so the module cannot be loaded.
import jax


def hvp(f, x, v):
    grad_f = jax.grad(f)
        return jax.jvp(grad_f, (x,), (v,))[1]
