"""Mistake: Bfloat16 running sum

Each microbatch's gradient is float32, but the scan carries the running gradient sum in bfloat16.
"""
import jax
import jax.numpy as jnp


def accumulate_gradients(params, xs, target):
    p32 = jax.tree.map(lambda p: p.astype(jnp.float32), params)
    n = jax.tree.leaves(xs)[0].shape[0]

    def loss_fn(p, batch):
        preds = 0.0
        for w, x in zip(jax.tree.leaves(p), jax.tree.leaves(batch)):
            preds = preds + (x * w).reshape(x.shape[0], -1).sum(axis=1)
        return 0.5 * jnp.mean(jnp.square(preds - target))

    def step(carry, batch):
        sl, sg = carry
        l, g = jax.value_and_grad(loss_fn)(p32, jax.tree.map(lambda x: x.astype(jnp.float32), batch))
        sg = jax.tree.map(lambda a, b, p: (a.astype(jnp.float32) + b).astype(p.dtype), sg, g, params)
        return (sl + l, sg), None

    init = (jnp.zeros((), jnp.float32), jax.tree.map(jnp.zeros_like, params))
    (sl, sg), _ = jax.lax.scan(step, init, xs)
    return sl / n, jax.tree.map(lambda g, p: (g.astype(jnp.float32) / n).astype(p.dtype), sg, params)
