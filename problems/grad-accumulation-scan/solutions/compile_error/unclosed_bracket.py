# Compile error: a syntax error (an unclosed bracket in the scan call), so the module cannot be loaded.
import jax
import jax.numpy as jnp


def accumulate_gradients(params, xs, target):
    grads = jax.tree.map(jnp.zeros_like, params)
    (loss, grads), _ = jax.lax.scan(lambda c, x: (c, None), (jnp.float32(0.0), grads), xs
    return loss, grads
