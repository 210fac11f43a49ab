# Like optax: scale_by_adam, add_decayed_weights, scale by -learning_rate, then apply_updates.
import jax
import jax.numpy as jnp


def _scale_by_adam(grads, mu, nu, count):
    up = lambda g: g.astype(jnp.float32)  # noqa: E731
    mu = jax.tree.map(lambda g, m: (1 - 0.9) * up(g) + 0.9 * up(m), grads, mu)
    nu = jax.tree.map(lambda g, v: (1 - 0.999) * up(g) ** 2 + 0.999 * up(v), grads, nu)
    mu_hat = jax.tree.map(lambda m: m / (1 - 0.9**count), mu)
    nu_hat = jax.tree.map(lambda v: v / (1 - 0.999**count), nu)
    updates = jax.tree.map(lambda m, v: m / (jnp.sqrt(v + 0.0) + 1e-8), mu_hat, nu_hat)
    return updates, mu, nu


def adamw(params, grads, mu, nu, step, learning_rate, weight_decay):
    count = (step + 1).astype(jnp.float32)
    updates, mu32, nu32 = _scale_by_adam(grads, mu, nu, count)
    updates = jax.tree.map(lambda u, p: u + weight_decay * p.astype(jnp.float32), updates, params)
    updates = jax.tree.map(lambda u: -learning_rate * u, updates)
    new_params = jax.tree.map(lambda p, u: (p.astype(jnp.float32) + u).astype(p.dtype), params, updates)
    cast = lambda tree: jax.tree.map(lambda x, p: x.astype(p.dtype), tree, params)  # noqa: E731
    return new_params, cast(mu32), cast(nu32)
