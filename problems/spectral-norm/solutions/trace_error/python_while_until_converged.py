# A Python `while` "until sigma stops changing" reads a traced value as a bool: fails under jax.jit.
import jax.numpy as jnp


def spectral_norm(w, u0, num_iters):
    w32 = w.astype(jnp.float32)
    u, sigma, previous = u0.astype(jnp.float32), jnp.float32(0.0), jnp.float32(-1.0)
    v = jnp.zeros(w.shape[1], jnp.float32)
    while jnp.abs(sigma - previous) > 1e-6:
        previous = sigma
        v = w32.T @ u / jnp.linalg.norm(w32.T @ u)
        u = w32 @ v / jnp.linalg.norm(w32 @ v)
        sigma = u @ w32 @ v
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
