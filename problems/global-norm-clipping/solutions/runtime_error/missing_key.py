# Runtime error: assumes grads always has a "w" and a "b" key (true for example 1 only): KeyError later.
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    w, b = grads["w"], grads["b"]
    norm = jnp.sqrt(jnp.sum(w.astype(jnp.float32) ** 2) + jnp.sum(b.astype(jnp.float32) ** 2))
    scale = jnp.minimum(1.0, max_norm / norm)
    clipped = {
        "w": (w.astype(jnp.float32) * scale).astype(w.dtype),
        "b": (b.astype(jnp.float32) * scale).astype(b.dtype),
    }
    return {"clipped": clipped, "global_norm": norm}
