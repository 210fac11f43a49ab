# A scan that stacks every iteration's (u, v) and keeps the last row; normalisation by lax.rsqrt.
import jax
import jax.numpy as jnp


def normalize(x):
    sq = jnp.vdot(x, x)
    return jnp.where(sq > 0, x * jax.lax.rsqrt(jnp.where(sq > 0, sq, 1.0)), jnp.zeros_like(x))


def spectral_norm(w, u0, num_iters):
    w32 = jnp.asarray(w, jnp.float32)

    def step(u, _):
        v = normalize(jnp.matmul(w32.T, u))
        u = normalize(jnp.matmul(w32, v))
        return u, (u, v)

    _, (us, vs) = jax.lax.scan(step, u0.astype(jnp.float32), jnp.arange(num_iters))
    u, v = us[-1], vs[-1]
    sigma = u @ w32 @ v
    return sigma.astype(w.dtype), u.astype(w.dtype), v.astype(w.dtype)
