# Compile error: a syntax error (missing closing parenthesis and colon), so the module cannot be loaded.
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm
    leaves = jax.tree.leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in leaves))
    return {"clipped": grads, "global_norm": norm}
