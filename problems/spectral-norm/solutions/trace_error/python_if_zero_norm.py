# A Python `if` on a traced norm (to skip the division for the zero vector) fails under jax.jit.
import jax
import jax.numpy as jnp


def normalize(x):
    norm = jnp.linalg.norm(x)
    if norm == 0:
        return x
    return x / norm


def spectral_norm(w, u0, num_iters):
    w32 = w.astype(jnp.float32)

    def body(_, carry):
        u, _ = carry
        v = normalize(w32.T @ u)
        return normalize(w32 @ v), v

    u, v = jax.lax.fori_loop(0, num_iters, body, (u0.astype(jnp.float32), jnp.zeros(w.shape[1])))
    sigma = u @ w32 @ v
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
