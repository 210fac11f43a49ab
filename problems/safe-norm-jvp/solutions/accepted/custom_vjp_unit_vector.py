"""custom_vjp instead of custom_jvp: the backward rule multiplies the cotangent by the unit vector, 0 for
a zero slice (jax.vjp uses it directly)."""
import jax
import jax.numpy as jnp


def _norm(x):
    m = jnp.max(jnp.abs(x), axis=-1, keepdims=True)
    m = jnp.where(m > 0, m, 1.0)
    return jnp.squeeze(m, -1) * jnp.sqrt(jnp.sum((x / m) ** 2, axis=-1))


@jax.custom_vjp
def safe_norm(x):
    return _norm(x)


def _fwd(x):
    n = _norm(x)
    return n, (x, n)


def _bwd(res, g):
    x, n = res
    safe = jnp.where(n > 0, n, 1.0)[..., None]
    return (jnp.where(n[..., None] > 0, x / safe, 0.0) * g[..., None],)


safe_norm.defvjp(_fwd, _bwd)
