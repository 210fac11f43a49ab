# Trace error: a Python `if` on a traced hidden unit to apply the ReLU, which has no concrete value under jit.
import jax
import jax.numpy as jnp


def _predict(member, x):
    pre = x @ member["w1"] + member["b1"]
    hidden = pre if jnp.all(pre > 0) else jnp.zeros_like(pre)
    return hidden @ member["w2"] + member["b2"]


def ensemble_predict(params, x):
    return jax.vmap(_predict, in_axes=(0, None))(params, x)
