# The gradient written out by hand: mean over examples of residual times input, summed in the scan carry.
import jax
import jax.numpy as jnp


def accumulate_gradients(params, xs, target):
    leaves, treedef = jax.tree.flatten(params)
    ws = [w.astype(jnp.float32) for w in leaves]
    xs_leaves = [x.astype(jnp.float32) for x in jax.tree.leaves(xs)]
    n, m = xs_leaves[0].shape[:2]

    def step(carry, batch):
        loss_sum, grad_sums = carry
        preds = sum(jnp.tensordot(x, w, axes=w.ndim) for w, x in zip(ws, batch))
        residual = preds - target
        grads = [jnp.tensordot(residual, x, axes=1) / m for x in batch]
        loss = 0.5 * jnp.sum(residual * residual) / m
        return (loss_sum + loss, [a + g for a, g in zip(grad_sums, grads)]), None

    init = (jnp.float32(0.0), [jnp.zeros_like(w) for w in ws])
    (loss_sum, grad_sums), _ = jax.lax.scan(step, init, xs_leaves)
    grads = [(g / n).astype(w.dtype) for g, w in zip(grad_sums, leaves)]
    return loss_sum / n, jax.tree.unflatten(treedef, grads)
