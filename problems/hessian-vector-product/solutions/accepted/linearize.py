# jax.linearize of the gradient at x, then the linear map applied to v.
import jax


def hvp(f, x, v):
    _, tangent_map = jax.linearize(jax.grad(f), x)
    return tangent_map(v)
