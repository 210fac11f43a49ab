# The scan returns each microbatch's loss and gradient (stacked along a new axis); the mean is taken after.
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

    def step(carry, batch):
        return carry, jax.value_and_grad(loss_fn)(p32, batch, target)

    _, (losses, grads) = jax.lax.scan(step, None, xs32)
    mean_grads = jax.tree.map(lambda g, p: jnp.mean(g, axis=0).astype(p.dtype), grads, params)
    return jnp.mean(losses), mean_grads
