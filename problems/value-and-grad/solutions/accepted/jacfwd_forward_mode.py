# Accepted: forward mode: jax.jacfwd of a scalar loss is its gradient, one tangent per parameter entry.
import jax
import jax.numpy as jnp


def loss_and_grad(params, x, y):
    def loss(p):
        residual = x @ p["w"] + p["b"] - y
        return 0.5 * jnp.vdot(residual, residual) / x.shape[0]

    return loss(params), jax.jacfwd(loss)(params)
