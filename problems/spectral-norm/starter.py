import jax
import jax.numpy as jnp


def spectral_norm(w, u0, num_iters):
    """Runs inside jax.jit: w (m, n) and u0 (m,) are traced arrays; num_iters is a static Python int.

    Return (sigma, u, v) after num_iters power iterations, in the dtype of w.
    """

    def normalize(x):
        # x / ||x||, and the zero vector for x == 0 (no Python `if`: the norm is traced). Your code here.
        return x

    def body(i, carry):
        u, v = carry
        # One iteration: v from w.T and u, then u from w and v. Your code here.
        return u, v

    u, v = jax.lax.fori_loop(0, num_iters, body, (u0, jnp.zeros(w.shape[1], w.dtype)))
    sigma = jnp.zeros((), w.dtype)
    return sigma, u, v
