# Accepted: jnp.matmul broadcasts x against the member axis (a batched matrix product per layer).
import jax.numpy as jnp


def ensemble_predict(params, x):
    pre = x[None] @ params["w1"] + params["b1"][:, None]
    hidden = jnp.where(pre > 0, pre, 0.0)
    return hidden @ params["w2"] + jnp.expand_dims(params["b2"], 1)
