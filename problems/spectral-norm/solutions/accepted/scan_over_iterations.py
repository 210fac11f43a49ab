# lax.scan over num_iters steps (no xs, length=num_iters) with (u, v) in the carry; sigma as ||w @ v||.
import jax
import jax.numpy as jnp


def normalize(x):
    norm = jnp.linalg.norm(x)
    return jnp.where(norm > 0, x / jnp.where(norm > 0, norm, 1.0), 0.0)


def spectral_norm(w, u0, num_iters):
    w32 = w.astype(jnp.float32)

    def step(carry, _):
        u, _ = carry
        v = normalize(w32.T @ u)
        u = normalize(w32 @ v)
        return (u, v), None

    (u, v), _ = jax.lax.scan(step, (u0.astype(jnp.float32), jnp.zeros(w.shape[1])), None, length=num_iters)
    sigma = jnp.linalg.norm(w32 @ v)
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
