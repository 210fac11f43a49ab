"""Mistake: Tangent summed, not projected

The JVP rule returns the sum of the tangent's entries, as if the derivative were all ones: the derivative
of the norm is the unit vector x / n, so the tangent is sum(x / n * t).
"""
import jax
import jax.numpy as jnp


@jax.custom_jvp
def safe_norm(x):
    m = jnp.max(jnp.abs(x), axis=-1, keepdims=True)
    m = jnp.where(m > 0, m, 1.0)
    return m[..., 0] * jnp.sqrt(jnp.sum((x / m) ** 2, axis=-1))


@safe_norm.defjvp
def _jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return safe_norm(x), jnp.sum(t, axis=-1)
