# Applies the decoupled decay and the Adam step as two subtractions, with lerp-style moment updates.
import jax
import jax.numpy as jnp


def adamw(params, grads, mu, nu, step, learning_rate, weight_decay):
    count = step + 1
    c1 = 1.0 - jnp.exp(count * jnp.log(jnp.float32(0.9)))
    c2 = 1.0 - jnp.exp(count * jnp.log(jnp.float32(0.999)))

    def moments(g, m, v):
        g = g.astype(jnp.float32)
        m = m.astype(jnp.float32)
        v = v.astype(jnp.float32)
        return m + 0.1 * (g - m), v + 0.001 * (g * g - v)

    def new_p(p, g, m, v):
        m2, v2 = moments(g, m, v)
        p32 = p.astype(jnp.float32)
        decayed = p32 - learning_rate * weight_decay * p32
        return (decayed - learning_rate * (m2 / c1) / (jnp.sqrt(v2 / c2) + 1e-8)).astype(p.dtype)

    new_params = jax.tree.map(new_p, params, grads, mu, nu)
    new_mu = jax.tree.map(lambda g, m, v: moments(g, m, v)[0].astype(m.dtype), grads, mu, nu)
    new_nu = jax.tree.map(lambda g, m, v: moments(g, m, v)[1].astype(v.dtype), grads, mu, nu)
    return new_params, new_mu, new_nu
