"""Mistake: No scaling

The custom JVP is right, but the value squares the entries as they are: 1e30 squared overflows float32
to infinity and 1e-30 squared underflows to 0. Divide each slice by its largest magnitude before
squaring and multiply the root by it.
"""
import jax
import jax.numpy as jnp


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x, axis=-1))


@safe_norm.defjvp
def _jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = safe_norm(x)
    safe = jnp.where(n > 0, n, 1.0)
    return n, jnp.where(n > 0, jnp.sum(x * t, axis=-1) / safe, 0.0)
