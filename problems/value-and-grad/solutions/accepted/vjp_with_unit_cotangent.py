# Accepted: jax.vjp of the loss pulled back from the cotangent 1.0 (what jax.grad does inside).
import jax
import jax.numpy as jnp


def loss_and_grad(params, x, y):
    def loss(p):
        prediction = jnp.einsum("nd,dk->nk", x, p["w"]) + p["b"][None, :]
        return 0.5 * jnp.mean(jnp.sum((prediction - y) ** 2, axis=1))

    value, pullback = jax.vjp(loss, params)
    (grads,) = pullback(jnp.ones_like(value))
    return value, grads
