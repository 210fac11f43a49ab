"""Mistake: Bfloat16 arithmetic

No cast to float32: with bfloat16 leaves the loss comes back bfloat16 (and the sums lose precision).
"""
import jax
import jax.numpy as jnp


def loss_fn(params, batch, target):
    preds = 0.0
    for w, x in zip(jax.tree.leaves(params), jax.tree.leaves(batch)):
        preds = preds + jnp.sum(x * w, axis=tuple(range(1, x.ndim)))
    return 0.5 * jnp.mean((preds - target) ** 2)


def accumulate_gradients(params, xs, target):
    n = jax.tree.leaves(xs)[0].shape[0]

    def step(carry, batch):
        loss_sum, grad_sum = carry
        loss, grads = jax.value_and_grad(loss_fn)(params, batch, target)
        return (loss_sum + loss, jax.tree.map(jnp.add, grad_sum, grads)), None

    first = jax.tree.leaves(params)[0]
    init = (jnp.zeros((), first.dtype), jax.tree.map(jnp.zeros_like, params))
    (loss_sum, grad_sum), _ = jax.lax.scan(step, init, xs)
    return loss_sum / n, jax.tree.map(lambda g: g / n, grad_sum)
