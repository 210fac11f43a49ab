import jax
import jax.numpy as jnp


def ste_round(x):
    """Round every leaf of the pytree x to the nearest integer (ties to even), keeping its dtype.

    The gradient must pass straight through the rounding: d ste_round(x) / dx is treated as the identity,
    so jax.vjp with cotangent g returns g itself. Define the rounding with jax.custom_vjp.
    """
    # TODO: jnp.round has a zero gradient almost everywhere; give it a custom backward rule.
    return jax.tree.map(jnp.round, x)
