"""No custom rule: the "double where". Zero slices are replaced by ones before the norm (so its gradient
there is finite) and their result by 0 after it (so that gradient is multiplied by 0). The scale is a
constant for autodiff (stop_gradient): the norm is homogeneous, so its derivative does not depend on it,
and differentiating x / m through m would need 1 / m^2, which underflows to 0 for m near 2^100."""
import jax
import jax.numpy as jnp


def safe_norm(x):
    zero = jnp.all(x == 0, axis=-1, keepdims=True)
    safe_x = jnp.where(zero, 1.0, x)
    m = jax.lax.stop_gradient(jnp.max(jnp.abs(safe_x), axis=-1, keepdims=True))
    n = m[..., 0] * jnp.linalg.norm(safe_x / m, axis=-1)
    return jnp.where(zero[..., 0], 0.0, n)
