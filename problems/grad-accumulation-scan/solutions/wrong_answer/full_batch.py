"""Mistake: Full batch

Right values (equal microbatches make the mean of means the full-batch mean), but no loop: the rule rejects
it.
"""
import jax
import jax.numpy as jnp


def accumulate_gradients(params, xs, target):
    p32 = jax.tree.map(lambda p: p.astype(jnp.float32), params)

    def loss_fn(p):
        preds = 0.0
        for w, x in zip(jax.tree.leaves(p), jax.tree.leaves(xs)):
            preds = preds + jnp.sum(x.astype(jnp.float32) * w, axis=tuple(range(2, x.ndim)))
        return 0.5 * jnp.mean((preds - target) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(p32)
    return loss, jax.tree.map(lambda g, p: g.astype(p.dtype), grads, params)
