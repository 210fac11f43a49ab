import jax
import jax.numpy as jnp


def ensemble_predict(params, x):
    """Runs inside jax.jit. params: w1 (E, d, h), b1 (E, h), w2 (E, h, k), b2 (E, k); x: (n, d)."""

    def predict(member, x):
        # One network: member["w1"] has shape (d, h), and so on. Return its (n, k) predictions.
        return jnp.zeros((x.shape[0], member["b2"].shape[0]), x.dtype)

    # Your code here: map predict over the members with jax.vmap (which arguments carry the member axis?).
    return jax.vmap(predict, in_axes=(0, None))(params, x)
