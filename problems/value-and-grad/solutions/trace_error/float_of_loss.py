# Trace error: float() on the traced loss (to log it), which has no concrete value while jax.jit traces.
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    return 0.5 * jnp.sum((x @ params["w"] + params["b"] - y) ** 2) / x.shape[0]


def loss_and_grad(params, x, y):
    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    history = [float(loss)]
    return jnp.float32(history[-1]), grads
