"""jax.checkpoint around a jax.lax.scan of plain layers: the whole forward scan is recomputed."""
import jax
import jax.numpy as jnp


def tanh_stack(ws, x):
    def forward(ws, x):
        return jax.lax.scan(lambda h, w: (jnp.tanh(h @ w), None), x, ws)[0]

    return jax.checkpoint(forward)(ws, x)
