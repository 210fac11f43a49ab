"""Mistake: Decay in gradient

Adam with L2 regularisation, not AdamW: adds weight_decay * p to the gradient before the moments.
"""
import jax
import jax.numpy as jnp


def adamw(params, grads, mu, nu, step, learning_rate, weight_decay):
    t = step.astype(jnp.float32) + 1.0
    c1, c2 = 1.0 - 0.9**t, 1.0 - 0.999**t
    f = lambda x: x.astype(jnp.float32)  # noqa: E731
    g2 = jax.tree.map(lambda g, p: f(g) + weight_decay * f(p), grads, params)
    new_mu = jax.tree.map(lambda m, g: 0.9 * f(m) + 0.1 * g, mu, g2)
    new_nu = jax.tree.map(lambda v, g: 0.999 * f(v) + 0.001 * g**2, nu, g2)
    new_params = jax.tree.map(
        lambda p, m, v: (f(p) - learning_rate * (m / c1) / (jnp.sqrt(v / c2) + 1e-8)).astype(p.dtype),
        params,
        new_mu,
        new_nu,
    )
    cast = lambda tree: jax.tree.map(lambda x, p: x.astype(p.dtype), tree, params)  # noqa: E731
    return new_params, cast(new_mu), cast(new_nu)
