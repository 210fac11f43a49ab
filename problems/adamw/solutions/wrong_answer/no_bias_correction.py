"""Mistake: No bias correction

Forgets the bias correction: uses the raw moments m' and v' in the step.
"""
import jax
import jax.numpy as jnp


def adamw(params, grads, mu, nu, step, learning_rate, weight_decay):
    f = lambda x: x.astype(jnp.float32)  # noqa: E731
    new_mu = jax.tree.map(lambda m, g: 0.9 * f(m) + 0.1 * f(g), mu, grads)
    new_nu = jax.tree.map(lambda v, g: 0.999 * f(v) + 0.001 * f(g) ** 2, nu, grads)
    new_params = jax.tree.map(
        lambda p, m, v: (f(p) - learning_rate * (m / (jnp.sqrt(v) + 1e-8) + weight_decay * f(p))).astype(p.dtype),
        params,
        new_mu,
        new_nu,
    )
    cast = lambda tree: jax.tree.map(lambda x, p: x.astype(p.dtype), tree, params)  # noqa: E731
    return new_params, cast(new_mu), cast(new_nu)
