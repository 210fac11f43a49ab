import jax
import jax.numpy as jnp


def accumulate_gradients(params, xs, target):
    """Average the loss and its gradient over the microbatches of xs, one microbatch at a time.

    Microbatch i holds the leaves x[i] of every leaf of xs (shape (m, *param shape)). Example j of it
    predicts pred_j = sum over leaves of sum(param_leaf * x[i, j]); its loss is
    0.5 * mean_j (pred_j - target) ** 2. Accumulate with jax.lax.scan (a Python loop is rejected).
    Return (loss, grads): the float32 mean loss and the mean gradient, shaped like params.
    """
    # TODO: jax.lax.scan(step, (loss_sum, grad_sum), xs) with jax.value_and_grad inside step.
    grads = jax.tree.map(jnp.zeros_like, params)
    return jnp.zeros((), jnp.float32), grads
