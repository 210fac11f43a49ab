# Time limit: an endless Python loop while the function is being traced (the loop condition never changes).
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in leaves))
    while True:
        pass
    return {"clipped": grads, "global_norm": norm}
