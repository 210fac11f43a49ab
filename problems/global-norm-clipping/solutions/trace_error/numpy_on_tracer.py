# Trace error: NumPy functions on traced leaves (np.sqrt / np.sum call __array__: TracerArrayConversionError).
import jax
import jax.numpy as jnp
import numpy as np


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    norm = np.sqrt(sum(np.sum(np.square(leaf.astype(jnp.float32))) for leaf in leaves))
    scale = jnp.minimum(1.0, max_norm / norm)
    clipped = jax.tree.map(lambda g: (g.astype(jnp.float32) * scale).astype(g.dtype), grads)
    return {"clipped": clipped, "global_norm": jnp.asarray(norm, jnp.float32)}
