"""Mistake: No cast back

Computes in float32 but never casts back: bfloat16 trees come back as float32.
"""
import jax
import jax.numpy as jnp


def adamw(params, grads, mu, nu, step, learning_rate, weight_decay):
    t = step.astype(jnp.float32) + 1.0
    c1, c2 = 1.0 - 0.9**t, 1.0 - 0.999**t
    f = lambda x: x.astype(jnp.float32)  # noqa: E731
    new_mu = jax.tree.map(lambda m, g: 0.9 * f(m) + 0.1 * f(g), mu, grads)
    new_nu = jax.tree.map(lambda v, g: 0.999 * f(v) + 0.001 * f(g) ** 2, nu, grads)
    new_params = jax.tree.map(
        lambda p, m, v: f(p) - learning_rate * ((m / c1) / (jnp.sqrt(v / c2) + 1e-8) + weight_decay * f(p)),
        params,
        new_mu,
        new_nu,
    )
    return new_params, new_mu, new_nu
