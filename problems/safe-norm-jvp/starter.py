import jax
import jax.numpy as jnp


@jax.custom_jvp
def safe_norm(x):
    """Runs inside jax.jit; the judge differentiates it with jax.vjp."""
    return jnp.sqrt(jnp.sum(x * x, axis=-1))


@safe_norm.defjvp
def safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = safe_norm(x)
    # Your code here: the tangent of the norm, 0 where the norm is 0.
    return n, jnp.sum(x * t, axis=-1) / n
