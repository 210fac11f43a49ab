"""Mistake: Scale differentiated

The double where and the scaling are right, but autodiff differentiates x / m through m as well: that
needs 1 / m^2, and for m near 2^100 it underflows to 0 in float32, so one of two terms that cancel is
lost and the gradient of huge slices comes out wrong (twice the right one for four equal entries). The
norm is homogeneous: treat the scale as a constant (jax.lax.stop_gradient(m)), or write the derivative
with jax.custom_jvp.
"""
import jax.numpy as jnp


def safe_norm(x):
    zero = jnp.all(x == 0, axis=-1, keepdims=True)
    safe_x = jnp.where(zero, 1.0, x)
    m = jnp.max(jnp.abs(safe_x), axis=-1, keepdims=True)
    n = m[..., 0] * jnp.linalg.norm(safe_x / m, axis=-1)
    return jnp.where(zero[..., 0], 0.0, n)
