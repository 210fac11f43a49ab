# Time limit: a jax.lax.while_loop of gradient steps while the gradient's size is >= 0, which is always true.
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    return 0.5 * jnp.sum((x @ params["w"] + params["b"] - y) ** 2) / x.shape[0]


def loss_and_grad(params, x, y):
    def not_converged(p):
        grads = jax.grad(_loss)(p, x, y)
        return sum(jnp.sum(jnp.abs(g)) for g in jax.tree.leaves(grads)) >= 0.0

    def step(p):
        grads = jax.grad(_loss)(p, x, y)
        return jax.tree.map(lambda a, g: a - 1e-3 * g, p, grads)

    trained = jax.lax.while_loop(not_converged, step, params)
    return jax.value_and_grad(_loss)(trained, x, y)
