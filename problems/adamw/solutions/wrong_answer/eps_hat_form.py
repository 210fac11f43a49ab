"""Mistake: Epsilon hat form

Kingma and Ba's eps-hat form: bias corrections folded into the step size, eps added to the raw sqrt(v').
"""
import jax
import jax.numpy as jnp

B1, B2, EPS = 0.9, 0.999, 1e-8


def adamw(params, grads, mu, nu, step, learning_rate, weight_decay):
    t = step.astype(jnp.float32) + 1.0
    alpha = jnp.sqrt(1.0 - B2**t) / (1.0 - B1**t)
    f = lambda x: x.astype(jnp.float32)  # noqa: E731
    new_mu = jax.tree.map(lambda m, g: B1 * f(m) + (1 - B1) * f(g), mu, grads)
    new_nu = jax.tree.map(lambda v, g: B2 * f(v) + (1 - B2) * f(g) ** 2, nu, grads)
    new_params = jax.tree.map(
        lambda p, m, v: (f(p) - learning_rate * (alpha * m / (jnp.sqrt(v) + EPS) + weight_decay * f(p))).astype(
            p.dtype
        ),
        params,
        new_mu,
        new_nu,
    )
    cast = lambda tree: jax.tree.map(lambda x, p: x.astype(p.dtype), tree, params)  # noqa: E731
    return new_params, cast(new_mu), cast(new_nu)
