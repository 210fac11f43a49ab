"""Mistake: Step off by one

Uses t = step instead of step + 1 in the bias correction (a 1 - 0.9**0 = 0 division on the first call).
"""
import jax
import jax.numpy as jnp


def adamw(params, grads, mu, nu, step, learning_rate, weight_decay):
    t = step.astype(jnp.float32)
    c1, c2 = 1.0 - 0.9**t, 1.0 - 0.999**t
    f = lambda x: x.astype(jnp.float32)  # noqa: E731
    new_mu = jax.tree.map(lambda m, g: 0.9 * f(m) + 0.1 * f(g), mu, grads)
    new_nu = jax.tree.map(lambda v, g: 0.999 * f(v) + 0.001 * f(g) ** 2, nu, grads)
    new_params = jax.tree.map(
        lambda p, m, v: (f(p) - learning_rate * ((m / c1) / (jnp.sqrt(v / c2) + 1e-8) + weight_decay * f(p))).astype(
            p.dtype
        ),
        params,
        new_mu,
        new_nu,
    )
    cast = lambda tree: jax.tree.map(lambda x, p: x.astype(p.dtype), tree, params)  # noqa: E731
    return new_params, cast(new_mu), cast(new_nu)
