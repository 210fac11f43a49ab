"""Mistake: Python loop

Right values, but a Python for loop over the microbatches: unrolled while tracing, so the rule rejects it.
"""
import jax
import jax.numpy as jnp


def loss_fn(params, batch, target):
    preds = 0.0
    for w, x in zip(jax.tree.leaves(params), jax.tree.leaves(batch)):
        preds = preds + jnp.sum(x * w, axis=tuple(range(1, x.ndim)))
    return 0.5 * jnp.mean((preds - target) ** 2)


def accumulate_gradients(params, xs, target):
    p32 = jax.tree.map(lambda p: p.astype(jnp.float32), params)
    n = jax.tree.leaves(xs)[0].shape[0]
    loss_sum = jnp.zeros((), jnp.float32)
    grad_sum = jax.tree.map(jnp.zeros_like, p32)
    for i in range(n):
        batch = jax.tree.map(lambda x: x[i].astype(jnp.float32), xs)
        loss, grads = jax.value_and_grad(loss_fn)(p32, batch, target)
        loss_sum = loss_sum + loss
        grad_sum = jax.tree.map(jnp.add, grad_sum, grads)
    return loss_sum / n, jax.tree.map(lambda g, p: (g / n).astype(p.dtype), grad_sum, params)
