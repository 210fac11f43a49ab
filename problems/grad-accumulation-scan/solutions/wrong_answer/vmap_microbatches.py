"""Mistake: vmap over the microbatches

Right values, but every microbatch at once with jax.vmap: no loop in the program, so the rule rejects it.
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
    xs32 = jax.tree.map(lambda x: x.astype(jnp.float32), xs)
    per_micro = jax.vmap(jax.value_and_grad(loss_fn), in_axes=(None, 0, None))
    losses, grads = per_micro(p32, xs32, target)
    return jnp.mean(losses), jax.tree.map(lambda g, p: jnp.mean(g, axis=0).astype(p.dtype), grads, params)
