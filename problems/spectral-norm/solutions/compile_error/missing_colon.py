# Compile error: a syntax error (no colon after the def of the loop body), so the module cannot be loaded.
import jax
import jax.numpy as jnp


def spectral_norm(w, u0, num_iters):
    def body(_, carry)
        u, v = carry
        v = w.T @ u / jnp.linalg.norm(w.T @ u)
        return w @ v / jnp.linalg.norm(w @ v), v

    u, v = jax.lax.fori_loop(0, num_iters, body, (u0, jnp.zeros(w.shape[1], w.dtype)))
    return u @ w @ v, u, v
