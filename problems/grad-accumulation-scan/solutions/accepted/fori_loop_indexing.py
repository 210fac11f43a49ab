# lax.fori_loop with dynamic indexing into xs: a compiled loop too (it lowers like a scan), so it is accepted.
import jax
import jax.numpy as jnp


def accumulate_gradients(params, xs, target):
    p32 = jax.tree.map(lambda p: p.astype(jnp.float32), params)
    n = jax.tree.leaves(xs)[0].shape[0]

    def loss_fn(p, batch):
        preds = sum(
            jnp.sum(x * w, axis=tuple(range(1, x.ndim)))
            for w, x in zip(jax.tree.leaves(p), jax.tree.leaves(batch))
        )
        return 0.5 * jnp.mean(jnp.square(preds - target))

    def body(i, carry):
        loss_sum, grad_sum = carry
        batch = jax.tree.map(lambda x: x[i].astype(jnp.float32), xs)
        loss, grads = jax.value_and_grad(loss_fn)(p32, batch)
        return loss_sum + loss, jax.tree.map(lambda a, g: a + g, grad_sum, grads)

    zeros = jax.tree.map(jnp.zeros_like, p32)
    loss_sum, grad_sum = jax.lax.fori_loop(0, n, body, (jnp.zeros((), jnp.float32), zeros))
    return loss_sum / n, jax.tree.map(lambda g, p: (g / n).astype(p.dtype), grad_sum, params)
