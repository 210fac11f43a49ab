# Compile error: clip_by_global_norm is bound to a dict, not a function.
import jax.numpy as jnp

clip_by_global_norm = {"clipped": None, "global_norm": jnp.float32(0.0)}
