"""A jax.lax.scan over the layers whose step is wrapped in jax.remat (jax.checkpoint's other name)."""
import jax
import jax.numpy as jnp


@jax.remat
def step(h, w):
    return jnp.tanh(jnp.einsum("nd,de->ne", h, w)), None


def tanh_stack(ws, x):
    h, _ = jax.lax.scan(step, x, ws)
    return h
