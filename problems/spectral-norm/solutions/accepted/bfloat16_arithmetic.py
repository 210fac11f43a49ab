# No float32 cast: bfloat16 inputs are iterated in bfloat16. Normalised power iteration contracts rounding
# errors instead of amplifying them, so the results stay within the bfloat16 tolerance.
import jax
import jax.numpy as jnp


def normalize(x):
    norm = jnp.linalg.norm(x)
    return jnp.where(norm > 0, x / jnp.where(norm > 0, norm, 1), 0).astype(x.dtype)


def spectral_norm(w, u0, num_iters):
    def body(_, carry):
        u, _ = carry
        v = normalize(w.T @ u)
        return normalize(w @ v), v

    u, v = jax.lax.fori_loop(0, num_iters, body, (u0, jnp.zeros(w.shape[1], w.dtype)))
    return (u @ w @ v).astype(w.dtype), u, v
