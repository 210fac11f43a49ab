"""Mistake: Epsilon inside sqrt

Adds epsilon under the square root, m_hat / sqrt(v_hat + eps), instead of m_hat / (sqrt(v_hat) + eps).
"""
import jax
import jax.numpy as jnp

B1, B2, EPS = 0.9, 0.999, 1e-8


def adamw(params, grads, mu, nu, step, learning_rate, weight_decay):
    t = step.astype(jnp.float32) + 1.0
    c1, c2 = 1.0 - B1**t, 1.0 - B2**t
    f = lambda x: x.astype(jnp.float32)  # noqa: E731
    new_mu = jax.tree.map(lambda m, g: B1 * f(m) + (1 - B1) * f(g), mu, grads)
    new_nu = jax.tree.map(lambda v, g: B2 * f(v) + (1 - B2) * f(g) ** 2, nu, grads)
    new_params = jax.tree.map(
        lambda p, m, v: (f(p) - learning_rate * ((m / c1) / jnp.sqrt(v / c2 + EPS) + weight_decay * f(p))).astype(
            p.dtype
        ),
        params,
        new_mu,
        new_nu,
    )
    cast = lambda tree: jax.tree.map(lambda x, p: x.astype(p.dtype), tree, params)  # noqa: E731
    return new_params, cast(new_mu), cast(new_nu)
