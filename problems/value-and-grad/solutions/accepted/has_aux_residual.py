# Accepted: value_and_grad with has_aux=True: the loss function also returns its residual, unpacked after.
import jax
import jax.numpy as jnp


def loss_and_grad(params, x, y):
    def loss(w, b):
        residual = x @ w + b - y
        return 0.5 * jnp.sum(residual * residual) / x.shape[0], residual

    (value, _residual), (grad_w, grad_b) = jax.value_and_grad(loss, argnums=(0, 1), has_aux=True)(
        params["w"], params["b"]
    )
    return value, {"w": grad_w, "b": grad_b}
