"""Mistake: Sum over examples

The microbatch loss sums over its examples instead of averaging: loss and gradients m times too large.
"""
import jax
import jax.numpy as jnp


def loss_fn(params, batch, target):
    preds = 0.0
    for w, x in zip(jax.tree.leaves(params), jax.tree.leaves(batch)):
        preds = preds + jnp.sum(x * w, axis=tuple(range(1, x.ndim)))
    return 0.5 * jnp.sum((preds - target) ** 2)


def accumulate_gradients(params, xs, target):
    p32 = jax.tree.map(lambda p: p.astype(jnp.float32), params)
    n = jax.tree.leaves(xs)[0].shape[0]

    def step(carry, batch):
        loss_sum, grad_sum = carry
        batch = jax.tree.map(lambda x: x.astype(jnp.float32), batch)
        loss, grads = jax.value_and_grad(loss_fn)(p32, batch, target)
        return (loss_sum + loss, jax.tree.map(jnp.add, grad_sum, grads)), None

    init = (jnp.zeros((), jnp.float32), jax.tree.map(jnp.zeros_like, p32))
    (loss_sum, grad_sum), _ = jax.lax.scan(step, init, xs)
    return loss_sum / n, jax.tree.map(lambda g, p: (g / n).astype(p.dtype), grad_sum, params)
