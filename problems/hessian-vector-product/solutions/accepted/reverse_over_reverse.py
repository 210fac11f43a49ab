# Reverse over reverse: the gradient of <grad f(x), v> with v held fixed.
import jax
import jax.numpy as jnp


def hvp(f, x, v):
    def directional(y):
        g = jax.grad(f)(y)
        return sum(jnp.vdot(a, b) for a, b in zip(jax.tree.leaves(g), jax.tree.leaves(v)))

    return jax.grad(directional)(x)
