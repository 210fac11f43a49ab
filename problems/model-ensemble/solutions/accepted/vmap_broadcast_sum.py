# Accepted: jax.vmap(predict, in_axes=(0, None)) with one network written as broadcast-multiply-then-sum
# (no matmul): vmap adds the member axis to every op, so the program is the same at every ensemble size.
import jax
import jax.numpy as jnp


def _predict(member, x):
    pre = jnp.sum(x[:, :, None] * member["w1"][None, :, :], axis=1) + member["b1"]
    hidden = jnp.maximum(pre, 0.0)
    return jnp.sum(hidden[:, :, None] * member["w2"][None, :, :], axis=1) + member["b2"]


def ensemble_predict(params, x):
    return jax.vmap(_predict, in_axes=(0, None))(params, x)
