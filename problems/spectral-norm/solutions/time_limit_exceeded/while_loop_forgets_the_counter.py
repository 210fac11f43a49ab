# Time limit: a lax.while_loop whose body never increments the counter, so `i < num_iters` stays true and
# the compiled loop runs forever.
import jax
import jax.numpy as jnp


def normalize(x):
    norm = jnp.linalg.norm(x)
    return jnp.where(norm > 0, x / jnp.where(norm > 0, norm, 1.0), 0.0)


def spectral_norm(w, u0, num_iters):
    w32 = w.astype(jnp.float32)

    def body(state):
        i, u, _ = state
        v = normalize(w32.T @ u)
        return i, normalize(w32 @ v), v

    state = (0, u0.astype(jnp.float32), jnp.zeros(w.shape[1], jnp.float32))
    _, u, v = jax.lax.while_loop(lambda s: s[0] < num_iters, body, state)
    sigma = u @ w32 @ v
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
