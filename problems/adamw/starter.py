import jax
import jax.numpy as jnp

B1, B2, EPS = 0.9, 0.999, 1e-8


def adamw(params, grads, mu, nu, step, learning_rate, weight_decay):
    """One AdamW step over pytrees of identical structure.

    step is a traced int32 array with 0 dimensions: the number of updates done before this one.
    Return (new_params, new_mu, new_nu), each shaped like params with its leaves' dtypes.
    Runs inside jax.jit. Leave the inputs unchanged.
    """
    # TODO: update the moments, correct their bias with t = step + 1, then decay the weights.
    new_mu = jax.tree.map(lambda m, g: B1 * m + (1 - B1) * g, mu, grads)
    new_nu = jax.tree.map(lambda v, g: B2 * v + (1 - B2) * g * g, nu, grads)
    new_params = jax.tree.map(jnp.copy, params)
    return new_params, new_mu, new_nu
