import jax
import jax.numpy as jnp


def top_k(x, k):
    """Runs inside jax.jit: x is a traced array, k a static Python int."""
    # Your code here: the k largest entries of each row, largest first, and their positions (int32).
    values = x[..., :k]
    indices = jnp.zeros(values.shape, jnp.int32)
    return values, indices
