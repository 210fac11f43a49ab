# lax.while_loop with an explicit counter in the state; products written as u @ w and einsum.
import jax
import jax.numpy as jnp


def normalize(x):
    sq = jnp.sum(jnp.square(x))
    safe = jnp.where(sq > 0, sq, 1.0)
    return jnp.where(sq > 0, x / jnp.sqrt(safe), jnp.zeros_like(x))


def spectral_norm(w, u0, num_iters):
    w32 = w.astype(jnp.float32)

    def cond(state):
        i, _, _ = state
        return i < num_iters

    def body(state):
        i, u, _ = state
        v = normalize(u @ w32)
        u = normalize(jnp.einsum("ij,j->i", w32, v))
        return i + 1, u, v

    _, u, v = jax.lax.while_loop(cond, body, (0, u0.astype(jnp.float32), jnp.zeros(w.shape[1], jnp.float32)))
    sigma = jnp.vdot(u, w32 @ v)
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
