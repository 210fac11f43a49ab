# A running mean in the carry (mean += (value - mean) / (i + 1)) instead of a sum divided at the end.
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

    def step(carry, inputs):
        i, batch = inputs
        mean_loss, mean_grads = carry
        loss, grads = jax.value_and_grad(loss_fn)(p32, jax.tree.map(lambda x: x.astype(jnp.float32), batch))
        k = 1.0 / (i + 1.0)
        mean_loss = mean_loss + (loss - mean_loss) * k
        mean_grads = jax.tree.map(lambda a, g: a + (g - a) * k, mean_grads, grads)
        return (mean_loss, mean_grads), None

    init = (jnp.zeros((), jnp.float32), jax.tree.map(jnp.zeros_like, p32))
    (loss, grads), _ = jax.lax.scan(step, init, (jnp.arange(n, dtype=jnp.float32), xs))
    return loss, jax.tree.map(lambda g, p: g.astype(p.dtype), grads, params)
