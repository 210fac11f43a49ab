# fori_loop with a dict carry; normalise by max(norm, smallest normal float32), which leaves every nonzero
# norm unchanged and sends the zero vector to 0 / tiny = 0 without a select.
import jax
import jax.numpy as jnp

TINY = jnp.finfo(jnp.float32).tiny


def normalize(x):
    return x / jnp.maximum(jnp.linalg.vector_norm(x), TINY)


def spectral_norm(w, u0, num_iters):
    w32 = w.astype(jnp.float32)

    def body(_, state):
        v = normalize(jnp.matmul(state["u"], w32))
        return {"u": normalize(jnp.matmul(w32, v)), "v": v}

    init = {"u": u0.astype(jnp.float32), "v": jnp.zeros(w.shape[1], jnp.float32)}
    state = jax.lax.fori_loop(0, num_iters, body, init)
    u, v = state["u"], state["v"]
    wv = jnp.matmul(w32, v)
    sigma = jnp.sqrt(jnp.sum(wv * wv))
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
